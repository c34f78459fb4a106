package storeservers

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"syscall"
	"testing"
)

// listensOn tells this process's listener from one of another process
// group.
func TestListensOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if owned, err := listensOn(syscall.Getpgrp(), port); err != nil || !owned {
		t.Fatalf("own listener: owned %v, %v", owned, err)
	}
	if owned, err := listensOn(os.Getpid()+1_000_000, port); err != nil || owned {
		t.Fatalf("another group: owned %v, %v", owned, err)
	}
	ln.Close()
	if owned, err := listensOn(syscall.Getpgrp(), port); err != nil || owned {
		t.Fatalf("closed listener: owned %v, %v", owned, err)
	}
}

// A server whose port another process took first (here this test, which
// answers every request as the server would) moves to another port instead
// of taking the other process's answers for its own: the URL, through the
// proxy, reaches the server started.
func TestServerMovesOffATakenPort(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("who holds a port is read from /proc")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	impostor := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "impostor")
		fmt.Fprint(w, `{"kind":"storage#buckets"}`)
	})}
	go impostor.Serve(ln)
	t.Cleanup(func() { impostor.Close() })
	taken := ln.Addr().(*net.TCPAddr).Port

	s := fakeGCS(t, taken)
	if s.port == taken {
		t.Fatalf("server still on the taken port %d", taken)
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/storage/v1/b/%s", s.Proxy.Addr, Bucket))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Server") == "impostor" {
		t.Fatalf("bucket through the proxy: %s, server %q; want 200 from fake-gcs-server", resp.Status, resp.Header.Get("Server"))
	}
}
