package zkwire_test

import (
	"fmt"
	"io"
	"log"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkwire"
)

// Start a wire server on loopback and use it from an unchanged
// go-zookeeper client; then lose the reply of its next create.
func Example() {
	srv, err := zkwire.Start() // in a test: zkwire.NewTestServer(t)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	c, events, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}
	path, err := c.Create("/hello", []byte("world"), 0, zk.WorldACL(zk.PermAll))
	fmt.Println(path, err)

	ctl, err := srv.Control(c.SessionID())
	if err != nil {
		log.Fatal(err)
	}
	ctl.LoseNextReply("create")
	_, err = c.Create("/lost", nil, 0, zk.WorldACL(zk.PermAll))
	fmt.Println(err)
	ok, _, _ := c.Exists("/lost") // after go-zookeeper reconnects to the session
	fmt.Println("applied anyway:", ok)
	// Output:
	// /hello <nil>
	// zk: connection closed
	// applied anyway: true
}
