package reliability

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"gocloud.dev/blob/azureblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/storeservers"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestJournalSnapshotReadsDeniedAzurite is TestJournalSnapshotReadsDenied
// on Azurite, where the storm was seen (175 full snapshots in 90 s): the
// daemon's credential is a container SAS that may create, write, list and
// delete blobs but not read them.
func TestJournalSnapshotReadsDeniedAzurite(t *testing.T) {
	srv := storeservers.Azurite(t)
	for k, v := range srv.Env {
		t.Setenv(k, v)
	}
	account, key := srv.Env["AZURE_STORAGE_ACCOUNT"], srv.Env["AZURE_STORAGE_KEY"]
	cred, err := azblob.NewSharedKeyCredential(account, key)
	if err != nil {
		t.Fatal(err)
	}
	perms := (&sas.ContainerPermissions{Create: true, Write: true, Delete: true, List: true}).String()
	q, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
		Permissions: perms, ContainerName: storeservers.Bucket}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatalf("sign a SAS: %v", err)
	}
	containerURL := fmt.Sprintf("%s/%s/%s?%s", srv.Endpoint(), account, storeservers.Bucket, q.Encode())
	cc, err := container.NewClientWithNoCredential(containerURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	bk, err := azureblob.OpenBucket(context.Background(), cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	denied := store.NewStore(bk)
	defer denied.Close()
	root, err := store.OpenStore(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	deniedStorm(t, c, denied, func() int {
		infos, err := root.Snapshots().List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(infos)
	})
}
