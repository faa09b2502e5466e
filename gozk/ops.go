package gozk

import (
	"context"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
)

// Create creates a znode and returns its path (with the sequence number for
// the sequential modes). ModeContainer uses go-zookeeper's CreateContainer.
// The TTL modes need CreateTTL: Create answers them with
// zksim.ErrBadArguments, as the Java client does.
func (c *Conn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	if err := zksim.ValidatePath(path, mode.IsSequential()); err != nil {
		return "", err
	}
	if !mode.Valid() {
		return "", fmt.Errorf("%w: unknown create mode %d", zksim.ErrBadArguments, int32(mode))
	}
	if mode.IsTTL() {
		return "", fmt.Errorf("%w: create mode %v needs CreateTTL", zksim.ErrBadArguments, mode)
	}
	var created string
	err := c.call(ctx, func() (err error) {
		if mode.IsContainer() {
			created, err = c.zk.CreateContainer(path, data, int32(mode), toZKACL(acl))
		} else {
			created, err = c.zk.Create(path, data, int32(mode), toZKACL(acl))
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return created, nil
}

// CreateTTL creates a TTL node (ModePersistentWithTTL or
// ModePersistentSequentialWithTTL). The server rounds ttl down to whole
// milliseconds and answers a ttl outside (0, zksim.MaxTTLMillis] with
// zksim.ErrBadArguments; a non-TTL mode is answered with
// zksim.ErrBadArguments before anything is sent.
func (c *Conn) CreateTTL(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl time.Duration) (string, error) {
	if err := zksim.ValidatePath(path, mode.IsSequential()); err != nil {
		return "", err
	}
	if !mode.IsTTL() {
		return "", fmt.Errorf("%w: create mode %v is not a TTL mode", zksim.ErrBadArguments, mode)
	}
	var created string
	err := c.call(ctx, func() (err error) {
		created, err = c.zk.CreateTTL(path, data, int32(mode), toZKACL(acl), ttl)
		return err
	})
	if err != nil {
		return "", err
	}
	return created, nil
}

// Delete deletes the znode at path if its version matches (-1: any).
func (c *Conn) Delete(ctx context.Context, path string, version int32) error {
	if err := zksim.ValidatePath(path, false); err != nil {
		return err
	}
	return c.call(ctx, func() error { return c.zk.Delete(path, version) })
}

// Exists reports whether the znode exists, with its Stat if it does (nil
// if it does not).
func (c *Conn) Exists(ctx context.Context, path string) (bool, *zksim.Stat, error) {
	found, st, _, err := c.exists(ctx, path, false)
	return found, st, err
}

// ExistsW is Exists that also sets a watch, whether or not the node exists.
func (c *Conn) ExistsW(ctx context.Context, path string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	return c.exists(ctx, path, true)
}

// exists is Exists, and ExistsW when watch is set: a data watch when the
// node exists, an exist watch when it does not.
func (c *Conn) exists(ctx context.Context, path string, watch bool) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return false, nil, nil, err
	}
	var (
		found bool
		st    *zk.Stat
		ch    <-chan zksim.Event
	)
	err := c.call(ctx, func() (err error) {
		if !watch {
			found, st, err = c.zk.Exists(path)
			return err
		}
		var zch <-chan zk.Event
		found, st, zch, err = c.zk.ExistsW(path)
		if err == nil {
			kind := watchExist
			if found {
				kind = watchData
			}
			ch = c.forward(zch, path, kind)
		}
		return err
	})
	if err != nil {
		return false, nil, nil, err
	}
	if !found {
		return false, nil, ch, nil
	}
	return true, fromZKStat(st), ch, nil
}

// Get returns the data and Stat of the znode at path.
func (c *Conn) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	data, st, _, err := c.get(ctx, path, false)
	return data, st, err
}

// GetW is Get that also sets a data watch. No watch is set when the node
// does not exist.
func (c *Conn) GetW(ctx context.Context, path string) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	return c.get(ctx, path, true)
}

// get is Get, and GetW when watch is set.
func (c *Conn) get(ctx context.Context, path string, watch bool) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, nil, nil, err
	}
	var (
		data []byte
		st   *zk.Stat
		ch   <-chan zksim.Event
	)
	err := c.call(ctx, func() (err error) {
		if !watch {
			data, st, err = c.zk.Get(path)
			return err
		}
		var zch <-chan zk.Event
		data, st, zch, err = c.zk.GetW(path)
		if err == nil {
			ch = c.forward(zch, path, watchData)
		}
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return data, fromZKStat(st), ch, nil
}

// Set replaces the data of the znode at path if its version matches (-1:
// any) and returns the new Stat.
func (c *Conn) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, err
	}
	var st *zk.Stat
	err := c.call(ctx, func() (err error) {
		st, err = c.zk.Set(path, data, version)
		return err
	})
	if err != nil {
		return nil, err
	}
	return fromZKStat(st), nil
}

// Children returns the names of the children of path, in the server's
// order (none defined), and the Stat of path.
func (c *Conn) Children(ctx context.Context, path string) ([]string, *zksim.Stat, error) {
	names, st, _, err := c.children(ctx, path, false)
	return names, st, err
}

// ChildrenW is Children that also sets a child watch. No watch is set when
// the node does not exist.
func (c *Conn) ChildrenW(ctx context.Context, path string) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	return c.children(ctx, path, true)
}

// children is Children, and ChildrenW when watch is set.
func (c *Conn) children(ctx context.Context, path string, watch bool) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, nil, nil, err
	}
	var (
		names []string
		st    *zk.Stat
		ch    <-chan zksim.Event
	)
	err := c.call(ctx, func() (err error) {
		if !watch {
			names, st, err = c.zk.Children(path)
			return err
		}
		var zch <-chan zk.Event
		names, st, zch, err = c.zk.ChildrenW(path)
		if err == nil {
			ch = c.forward(zch, path, watchChild)
		}
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return names, fromZKStat(st), ch, nil
}

// Sync waits until the server has applied every write the leader had
// committed when the sync was issued, and returns path.
func (c *Conn) Sync(ctx context.Context, path string) (string, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return "", err
	}
	var synced string
	err := c.call(ctx, func() (err error) {
		synced, err = c.zk.Sync(path)
		return err
	})
	if err != nil {
		return "", err
	}
	return synced, nil
}

// GetACL returns the ACL and Stat of the znode at path.
func (c *Conn) GetACL(ctx context.Context, path string) ([]zksim.ACL, *zksim.Stat, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, nil, err
	}
	var (
		acl []zk.ACL
		st  *zk.Stat
	)
	err := c.call(ctx, func() (err error) {
		acl, st, err = c.zk.GetACL(path)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return fromZKACL(acl), fromZKStat(st), nil
}

// SetACL replaces the ACL of the znode at path if its ACL version matches
// (-1: any) and returns the new Stat.
func (c *Conn) SetACL(ctx context.Context, path string, acl []zksim.ACL, version int32) (*zksim.Stat, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, err
	}
	var st *zk.Stat
	err := c.call(ctx, func() (err error) {
		st, err = c.zk.SetACL(path, toZKACL(acl), version)
		return err
	})
	if err != nil {
		return nil, err
	}
	return fromZKStat(st), nil
}

// AddAuth adds credentials to the session; go-zookeeper re-sends them
// after every reconnect. A scheme the server does not know is answered
// with zksim.ErrAuthFailed, and the server then drops the connection (the
// session lives on; the Conn reconnects).
func (c *Conn) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	return c.call(ctx, func() error { return c.zk.AddAuth(scheme, auth) })
}

func toZKACL(acl []zksim.ACL) []zk.ACL {
	if acl == nil {
		return nil
	}
	out := make([]zk.ACL, len(acl))
	for i, a := range acl {
		out[i] = zk.ACL{Perms: a.Perms, Scheme: a.Scheme, ID: a.ID}
	}
	return out
}

func fromZKACL(acl []zk.ACL) []zksim.ACL {
	if acl == nil {
		return nil
	}
	out := make([]zksim.ACL, len(acl))
	for i, a := range acl {
		out[i] = zksim.ACL{Perms: a.Perms, Scheme: a.Scheme, ID: a.ID}
	}
	return out
}

func fromZKStat(st *zk.Stat) *zksim.Stat {
	if st == nil {
		return nil
	}
	return &zksim.Stat{
		Czxid:          st.Czxid,
		Mzxid:          st.Mzxid,
		Ctime:          st.Ctime,
		Mtime:          st.Mtime,
		Version:        st.Version,
		Cversion:       st.Cversion,
		Aversion:       st.Aversion,
		EphemeralOwner: st.EphemeralOwner,
		DataLength:     st.DataLength,
		NumChildren:    st.NumChildren,
		Pzxid:          st.Pzxid,
	}
}
