package zkmem_test

import (
	"context"
	"fmt"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// A follower that lags serves a stale read until the reader syncs.
func ExampleEnsemble() {
	ctx := context.Background()
	e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
	defer e.Close()
	writer, _ := e.Connect(zkmem.WithMembers(0))
	reader, _ := e.Connect(zkmem.WithMembers(1))

	e.Lag(1) // member 1 stops applying commits
	writer.Create(ctx, "/config", []byte("v2"), zksim.ModePersistent, zksim.OpenACL())
	ok, _, _ := reader.Exists(ctx, "/config")
	fmt.Println("before sync:", ok, "pending:", e.Pending(1))

	go func() { e.CatchUp(1) }() // the sync below waits for member 1
	reader.Sync(ctx, "/")
	ok, _, _ = reader.Exists(ctx, "/config")
	fmt.Println("after sync:", ok, "pending:", e.Pending(1))
	// Output:
	// before sync: false pending: 1
	// after sync: true pending: 0
}
