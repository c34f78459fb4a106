package store

// The local drivers, which link no cloud SDK: a store opens file:// and
// mem:// itself. The cloud ones (s3://, gs://, azblob://, and the KMS keys
// of OpenKeeper) are in internal/storedrivers, which only the commands
// import.
import (
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"
)
