package harness_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"
)

// Elector is a leader election of one's own, on go-zookeeper: the code
// under test of the README's "Exploring your own code". Each contender
// creates a protected ephemeral sequential node under Dir and leads while
// its node is the lowest; the others watch their predecessor.
type Elector struct {
	Conn *zk.Conn
	Dir  string
	// Blind is the planted bug: once it leads, it waits for nothing but
	// ctx, and Leading reports the flag it set when it won without asking
	// whether the session it won on is still the client's (go-zookeeper
	// opens a new session after an expiry, and the node that made it
	// leader went with the old one).
	Blind bool

	mu      sync.Mutex
	leading bool
	session int64  // the session it won on
	prefix  string // its nodes' names begin with it
}

// Leading reports whether e leads.
func (e *Elector) Leading() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading && (e.Blind || e.session == e.Conn.SessionID())
}

func (e *Elector) setLeading(on bool, session int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.leading, e.session = on, session
}

// Campaign runs for leadership until ctx ends (it resigns: its node is
// deleted) or its node goes (its session expired); it leads meanwhile
// whenever its node is the lowest. A campaign that fails (the connection
// was lost) leaves its node to the next one on the same session: a new
// node would queue behind it, and nobody would ever delete it.
func (e *Elector) Campaign(ctx context.Context) error {
	me, err := e.join()
	if err != nil {
		return err
	}
	defer func() {
		e.setLeading(false, 0)
		if ctx.Err() != nil {
			_ = e.Conn.Delete(me, -1)
		}
	}()
	for {
		names, _, err := e.Conn.Children(e.Dir)
		if err != nil {
			return err
		}
		slices.SortFunc(names, func(a, b string) int { return cmp.Compare(seq(a), seq(b)) })
		i := slices.Index(names, me[len(e.Dir)+1:])
		if i < 0 {
			return errors.New("my node is gone")
		}
		watch := me // the leader watches its own node, the others their predecessor
		if i > 0 {
			watch = e.Dir + "/" + names[i-1]
		}
		ok, st, ch, err := e.Conn.ExistsW(watch)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if i == 0 {
			e.setLeading(true, st.EphemeralOwner) // it leads on the session that owns its node
			if e.Blind {
				<-ctx.Done()
				return ctx.Err()
			}
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return ev.Err
			}
			e.setLeading(false, 0)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// join returns e's node: the one an earlier campaign of this Elector left
// on the client's session, if there is one, else a new one. Its nodes are
// named by a prefix of its own, so that it finds one whose create failed
// after the server made it (the connection was lost before the reply), as
// a protected create does; go-zookeeper's CreateProtectedEphemeralSequential
// looks for it only within its call, and not at all after ErrNoServer.
func (e *Elector) join() (string, error) {
	e.mu.Lock()
	if e.prefix == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		e.prefix = "_c_" + hex.EncodeToString(b[:]) + "-n-"
	}
	prefix := e.prefix
	e.mu.Unlock()
	names, _, err := e.Conn.Children(e.Dir)
	if err != nil {
		return "", err
	}
	for _, name := range names {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		ok, st, err := e.Conn.Exists(e.Dir + "/" + name)
		if err != nil {
			return "", err
		}
		if ok && st.EphemeralOwner == e.Conn.SessionID() {
			return e.Dir + "/" + name, nil
		}
	}
	return e.Conn.Create(e.Dir+"/"+prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
}

// seq returns the sequence number of a sequential node's name, as an
// unsigned number: after 2147483647 the server's counter wraps to
// -2147483648, which comes later.
func seq(name string) uint32 {
	n, _ := strconv.ParseInt(name[len(name)-10:], 10, 64)
	if strings.HasSuffix(name[:len(name)-10], "--") { // "n-" then a minus sign
		n = -n
	}
	return uint32(int32(n))
}
