package conformance

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/zkwire"
)

// wireLog is the node events one wire-protocol session received, in the
// order they came off the connection. zksim.Conn gives each watch its own
// channel, which loses the order between watches; a go-zookeeper event
// callback, run on its receive loop, keeps it.
type wireLog struct {
	mu  sync.Mutex
	evs []string // "NodeDeleted /path"
}

func (l *wireLog) add(ev zk.Event) {
	switch ev.Type {
	case zk.EventNodeCreated, zk.EventNodeDeleted, zk.EventNodeDataChanged, zk.EventNodeChildrenChanged:
	default:
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, wireEvent(ev.Type, ev.Path))
}

func (l *wireLog) events() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.evs...)
}

func wireEvent(t zk.EventType, path string) string { return t.String() + " " + path }

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// wireWatcher opens a go-zookeeper session straight to the backend's
// server: its WireAddr, the real server's address, or zkmem served over
// the wire by zkwire (on 127.0.0.1). It skips on a backend that has none
// of them. The session is closed when the case ends.
func (e *env) wireWatcher() (*zk.Conn, *wireLog) {
	e.t.Helper()
	var addr string
	switch {
	case e.b.WireAddr != "":
		addr = e.b.WireAddr
	case e.b.Real != nil:
		addr = e.b.Real.Addr()
	case e.b.Mem != nil:
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(e.t, err)
		srv := zkwire.New(e.b.Mem, zkwire.Options{})
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ln) }()
		e.t.Cleanup(func() {
			_ = srv.Close()
			if err := <-done; err != nil && !errors.Is(err, zkwire.ErrServerClosed) {
				e.t.Errorf("zkwire: Serve: %v", err)
			}
		})
		addr = ln.Addr().String()
	default:
		e.t.Skipf("backend %s: none of WireAddr, Real and Mem is set: no server to watch over the wire", e.b.Name)
	}
	log := new(wireLog)
	zc, _, err := zk.Connect([]string{addr}, e.facts().MaxSessionTimeout,
		zk.WithEventCallback(log.add), zk.WithLogger(quietLogger{}))
	require.NoError(e.t, err)
	e.t.Cleanup(zc.Close)
	e.poll(10*time.Second, "the wire watcher's session", func() bool { return zc.State() == zk.StateHasSession })
	return zc, log
}
