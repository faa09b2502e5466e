package history

import (
	"context"
	"fmt"
	"time"

	"github.com/zksim/zksim"
)

// Conn wraps conn so that every call that reads or writes the tree is
// recorded as client's. Create (persistent mode only), Set, Delete, Get,
// Exists, Children and Sync are recorded as themselves, and their watch
// variants as the plain call; Multi, CreateTTL and creates in other modes
// are recorded as Unsupported (Check refuses such a history). The other
// methods pass through unrecorded. Every call blocks as conn's does.
func (r *Recorder) Conn(client int, conn zksim.Conn) zksim.Conn {
	return &recConn{Conn: conn, r: r, client: client}
}

type recConn struct {
	zksim.Conn
	r      *Recorder
	client int
}

func (c *recConn) invoke(kind Kind, path string, data []byte, version int32) int {
	return c.r.Invoke(Op{Client: c.client, Session: c.SessionID(), Kind: kind, Path: path, Data: data, Version: version})
}

func (c *recConn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	var id int
	if mode == zksim.ModePersistent {
		id = c.invoke(Create, path, data, 0)
	} else {
		id = c.r.Invoke(Op{Client: c.client, Kind: Unsupported, Path: path, What: fmt.Sprintf("create mode %v", mode)})
	}
	p, err := c.Conn.Create(ctx, path, data, mode, acl)
	c.r.Return(id, Result{Err: err})
	return p, err
}

func (c *recConn) CreateTTL(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl time.Duration) (string, error) {
	id := c.r.Invoke(Op{Client: c.client, Kind: Unsupported, Path: path, What: "createTTL"})
	p, err := c.Conn.CreateTTL(ctx, path, data, mode, acl, ttl)
	c.r.Return(id, Result{Err: err})
	return p, err
}

func (c *recConn) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	id := c.invoke(Set, path, data, version)
	st, err := c.Conn.Set(ctx, path, data, version)
	c.r.Return(id, Result{Stat: st, Err: err})
	return st, err
}

func (c *recConn) Delete(ctx context.Context, path string, version int32) error {
	id := c.invoke(Delete, path, nil, version)
	err := c.Conn.Delete(ctx, path, version)
	c.r.Return(id, Result{Err: err})
	return err
}

func (c *recConn) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	id := c.invoke(Get, path, nil, 0)
	data, st, err := c.Conn.Get(ctx, path)
	c.r.Return(id, Result{Data: data, Stat: st, Err: err})
	return data, st, err
}

func (c *recConn) GetW(ctx context.Context, path string) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	id := c.invoke(Get, path, nil, 0)
	data, st, ch, err := c.Conn.GetW(ctx, path)
	c.r.Return(id, Result{Data: data, Stat: st, Err: err})
	return data, st, ch, err
}

func (c *recConn) Exists(ctx context.Context, path string) (bool, *zksim.Stat, error) {
	id := c.invoke(Exists, path, nil, 0)
	ok, st, err := c.Conn.Exists(ctx, path)
	c.r.Return(id, Result{Exists: ok, Stat: st, Err: err})
	return ok, st, err
}

func (c *recConn) ExistsW(ctx context.Context, path string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	id := c.invoke(Exists, path, nil, 0)
	ok, st, ch, err := c.Conn.ExistsW(ctx, path)
	c.r.Return(id, Result{Exists: ok, Stat: st, Err: err})
	return ok, st, ch, err
}

func (c *recConn) Children(ctx context.Context, path string) ([]string, *zksim.Stat, error) {
	id := c.invoke(Children, path, nil, 0)
	names, st, err := c.Conn.Children(ctx, path)
	c.r.Return(id, Result{Children: names, Stat: st, Err: err})
	return names, st, err
}

func (c *recConn) ChildrenW(ctx context.Context, path string) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	id := c.invoke(Children, path, nil, 0)
	names, st, ch, err := c.Conn.ChildrenW(ctx, path)
	c.r.Return(id, Result{Children: names, Stat: st, Err: err})
	return names, st, ch, err
}

func (c *recConn) Sync(ctx context.Context, path string) (string, error) {
	id := c.invoke(Sync, path, nil, 0)
	p, err := c.Conn.Sync(ctx, path)
	c.r.Return(id, Result{Err: err})
	return p, err
}

func (c *recConn) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	id := c.r.Invoke(Op{Client: c.client, Kind: Unsupported, What: fmt.Sprintf("multi of %d ops", len(ops))})
	res, err := c.Conn.Multi(ctx, ops...)
	c.r.Return(id, Result{Err: err})
	return res, err
}
