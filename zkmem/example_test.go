package zkmem_test

import (
	"context"
	"fmt"
	"time"

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

// A transport drives a Session: every request goes through Do, and the
// server's replies and notifications reach its Sink in order. A fault armed
// on the session's Control strikes whatever the transport.
func ExampleSession() {
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	sink := &printSink{}
	sess, _ := srv.OpenSession(10*time.Second, zkmem.DefaultClientAddr, sink)

	sess.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/a", ACL: zksim.OpenACL(), TTL: -1})
	sess.Do(&zkmem.Request{Op: zkmem.OpGetData, Path: "/a", Watch: true})
	srv.Control(sess.ID()).LoseNextReply(zkmem.OpSetData)
	resp := sess.Do(&zkmem.Request{Op: zkmem.OpSetData, Path: "/a", Data: []byte("x"), Version: -1})
	fmt.Println(resp.Fault, resp.Closed, resp.Err)
	// Output:
	// reply create /a <nil>
	// reply getData /a <nil>
	// event EventNodeDataChanged /a
	// LoseReply true zk: connection lost: the request may or may not have been applied
}

// printSink prints what the server sends a session.
type printSink struct{}

func (printSink) Reply(req *zkmem.Request, resp *zkmem.Response) {
	fmt.Println("reply", req, resp.Err)
}
func (printSink) Event(ev zksim.Event, _ int64) { fmt.Println("event", ev.Type, ev.Path) }
func (printSink) Closed(err error)              { fmt.Println("closed", err) }
