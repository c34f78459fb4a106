package main

// The cloud store backends (s3://, gs://, azblob://) and KMS keys
// (awskms://, gcpkms://, azurekeyvault://): only the commands link them.
import _ "github.com/offsetkeeper/offsetkeeper/internal/storedrivers"
