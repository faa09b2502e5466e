package difftest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zksim/zksim"
)

// backend is one side of the comparison: the sessions of one sequence on
// zkmem or on the real server, and what it takes to normalise what they
// return.
type backend struct {
	name   string
	root   string
	conns  []zksim.Conn
	closed []bool
	owners map[int64]int // session id -> session index
	base   int64         // czxid of the sequence's root
	// lastZxid reads the zxid of the last transaction the server applied.
	lastZxid func(context.Context) (int64, error)
}

func newBackend(name, root string, conns []zksim.Conn, lastZxid func(context.Context) (int64, error)) *backend {
	b := &backend{name: name, root: root, conns: conns, closed: make([]bool, len(conns)), owners: make(map[int64]int), lastZxid: lastZxid}
	for i, c := range conns {
		b.owners[c.SessionID()] = i
	}
	return b
}

// createRoot creates the sequence's root with session 0 and records its
// czxid as the origin of normalised zxids.
func (b *backend) createRoot(ctx context.Context) error {
	if _, err := b.conns[0].Create(ctx, b.root, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
		return fmt.Errorf("%s: create root %s: %w", b.name, b.root, err)
	}
	_, st, err := b.conns[0].Exists(ctx, b.root)
	if err != nil {
		return fmt.Errorf("%s: stat root %s: %w", b.name, b.root, err)
	}
	b.base = st.Czxid
	return nil
}

// zxidAfter renders the server's last zxid relative to the root's czxid:
// how many transactions the sequence has cost so far (every write, failed
// or not, and every session close).
func (b *backend) zxidAfter(ctx context.Context) string {
	z, err := b.lastZxid(ctx)
	if err != nil {
		return "zxid=" + errName(err)
	}
	return fmt.Sprintf("zxid=+%d", z-b.base)
}

// closeAll closes every session not closed yet.
func (b *backend) closeAll() {
	for i, c := range b.conns {
		if !b.closed[i] {
			_ = c.Close()
			b.closed[i] = true
		}
	}
}

// rel shows a path relative to the root ("~" is the root itself).
func (b *backend) rel(path string) string {
	if path == b.root {
		return "~"
	}
	if rest, ok := strings.CutPrefix(path, b.root+"/"); ok {
		return "~/" + rest
	}
	return path
}

// stat renders a Stat with zxids relative to the root's czxid, no times,
// and the ephemeral owner as a session index.
func (b *backend) stat(st *zksim.Stat) string {
	if st == nil {
		return "nil"
	}
	return fmt.Sprintf("{cz:%d mz:%d pz:%d v:%d cv:%d av:%d owner:%s len:%d kids:%d}",
		st.Czxid-b.base, st.Mzxid-b.base, st.Pzxid-b.base,
		st.Version, st.Cversion, st.Aversion, b.owner(st.EphemeralOwner), st.DataLength, st.NumChildren)
}

func (b *backend) owner(id int64) string {
	if id == 0 {
		return "-"
	}
	if i, ok := b.owners[id]; ok {
		return fmt.Sprintf("s%d", i)
	}
	return "other"
}

// event renders a watch event with its path relative to the root.
func (b *backend) event(ev zksim.Event) string {
	s := fmt.Sprintf("%v %v %s", ev.Type, ev.State, b.rel(ev.Path))
	if ev.Err != nil {
		s += " err=" + errName(ev.Err)
	}
	return s
}

// errName names an error by its ZooKeeper code, so that both backends'
// wordings compare equal.
func errName(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, zksim.ErrClosing):
		return "closing"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "ctx(" + err.Error() + ")"
	}
	var zerr *zksim.Error
	if errors.As(err, &zerr) {
		return fmt.Sprintf("%d %s", zerr.Code, strings.TrimPrefix(zerr.Error(), "zk: "))
	}
	return "other(" + err.Error() + ")"
}
