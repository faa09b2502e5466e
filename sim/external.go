package sim

import (
	"context"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// opExternal is the trace's name for a call to a service outside ZooKeeper.
const opExternal = "external"

// External calls a service outside ZooKeeper (a database, a fenced storage
// service, a protected resource) from this client, as a scheduled request:
// apply runs on the scheduler's goroutine when the scheduler applies the
// request, and External returns when the scheduler then delivers its reply.
// So a pause of the client, a delivery delay or the scheduler's choices come
// between the client's decision to call and the moment the service acts, as
// they would between a process and a remote service.
//
// The call travels with the client's ZooKeeper requests (one queue per
// client) but is not a ZooKeeper request: no fault of the catalogue strikes
// it, and it is applied whatever the state of the session, expired included,
// for the service knows nothing of ZooKeeper sessions. Only a Conn that was
// closed refuses it, with zksim.ErrClosing. name describes the call in the
// trace. As with every call, External returns ctx.Err() when ctx ends first,
// and the call may still be applied later.
func (c *Conn) External(ctx context.Context, name string, apply func() error) error {
	c.mu.Lock()
	finished := c.finished
	c.mu.Unlock()
	if finished {
		return zksim.ErrClosing
	}
	return c.sendAs(ctx, opExternal, zkmem.Request{Path: name}, 0, func(context.Context, *zkmem.Conn) result {
		return result{err: apply()}
	}).err
}
