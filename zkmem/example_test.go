package zkmem_test

import (
	"context"
	"fmt"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// A unit test's ZooKeeper: a server, two sessions, a watch, and a lost reply.
func Example() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	alice, _ := srv.Connect()
	bob, _ := srv.Connect()

	alice.Create(ctx, "/jobs", nil, zksim.ModePersistent, zksim.OpenACL())
	_, _, changed, _ := bob.ChildrenW(ctx, "/jobs")

	// Alice's create reaches the server but its reply is lost.
	srv.Control(alice.SessionID()).LoseNextReply(zkmem.OpCreate)
	_, err := alice.Create(ctx, "/jobs/job-", nil, zksim.ModePersistentSequential, zksim.OpenACL())
	fmt.Println(err)
	fmt.Println(<-changed)
	names, _, _ := bob.Children(ctx, "/jobs")
	fmt.Println(names)
	// Output:
	// zk: connection lost: the request may or may not have been applied
	// EventNodeChildrenChanged StateConnected "/jobs"
	// [job-0000000000]
}

// Expire a session to see what its ephemerals' watchers see.
func ExampleControl_Expire() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	holder, _ := srv.Connect()
	watcher, _ := srv.Connect()

	holder.Create(ctx, "/leader", []byte("holder"), zksim.ModeEphemeral, zksim.OpenACL())
	_, _, gone, _ := watcher.ExistsW(ctx, "/leader")
	srv.Control(holder.SessionID()).Expire()
	fmt.Println(<-gone)
	_, err := holder.Create(ctx, "/leader", nil, zksim.ModeEphemeral, zksim.OpenACL())
	fmt.Println(err)
	// Output:
	// EventNodeDeleted StateConnected "/leader"
	// zk: session has expired
}
