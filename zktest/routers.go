package zktest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/zkserver"
)

// routerTable is the Conns an ensemble backend opened, each a gozk Conn
// that reaches the members through its own zkserver.Router, so that a
// test can drop one Conn's connection (Move) and find the member it is on.
type routerTable struct {
	name string // the backend's, for errors

	mu      sync.Mutex
	routers map[zksim.Conn]*zkserver.Router // nil once closed
}

func newRouterTable(name string) *routerTable {
	return &routerTable{name: name, routers: make(map[zksim.Conn]*zkserver.Router)}
}

// connect opens a session through router, which it owns from then on (it
// closes it if the session cannot be opened).
func (rt *routerTable) connect(ctx context.Context, router *zkserver.Router, sessionTimeout time.Duration) (zksim.Conn, error) {
	c, err := gozk.Connect(ctx, router.Servers(), gozk.WithSessionTimeout(sessionTimeout))
	if err != nil {
		router.Close()
		return nil, err
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.routers == nil {
		c.Close()
		router.Close()
		return nil, fmt.Errorf("zktest: the %s is closed", rt.name)
	}
	rt.routers[c] = router
	return c, nil
}

func (rt *routerTable) router(c zksim.Conn) (*zkserver.Router, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	router, ok := rt.routers[c]
	if !ok {
		return nil, fmt.Errorf("zktest: conn %T %#x was not opened by this ensemble", c, c.SessionID())
	}
	return router, nil
}

// closeAll closes every router; later connects fail.
func (rt *routerTable) closeAll() {
	rt.mu.Lock()
	routers := rt.routers
	rt.routers = nil
	rt.mu.Unlock()
	for _, r := range routers {
		r.Close()
	}
}

// Move drops c's connection and returns once c is connected again,
// through the next member of its list.
func (rt *routerTable) Move(ctx context.Context, c zksim.Conn) error {
	router, err := rt.router(c)
	if err != nil {
		return err
	}
	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := c.SessionEvents(evCtx)
	router.Drop()
	if err := awaitState(ctx, events, zksim.StateDisconnected); err != nil {
		return err
	}
	if err := awaitState(ctx, events, zksim.StateConnected); err != nil {
		return err
	}
	return settle(ctx)
}

// awaitState reads session events until one reports want; a session that
// expires or a Conn closed on the way is an error.
func awaitState(ctx context.Context, events <-chan zksim.Event, want zksim.State) error {
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("zktest: waiting for %v: %w", want, ctx.Err())
		case ev, ok := <-events:
			if !ok {
				return fmt.Errorf("zktest: the Conn closed while waiting for %v", want)
			}
			switch ev.State {
			case want:
				return nil
			case zksim.StateExpired:
				return zksim.ErrSessionExpired
			}
		}
	}
}

// settle waits reconnectSettle after a go-zookeeper Conn reconnected (see
// proxyTable.reconnect: go-zookeeper/zk#35).
func settle(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(reconnectSettle):
		return nil
	}
}
