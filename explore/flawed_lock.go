package explore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync/atomic"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
)

// naiveLock is the lock recipe as it is often first written, with the two
// mistakes the ZooKeeper literature warns about, each behind a switch. It
// exists only to show that the lock machine catches them.
//
//   - Without a GUID (guid == ""), a create that fails with connection loss
//     is simply sent again. If the first create was applied (its reply was
//     lost), its node stays, orphaned inside a live session, ahead of the
//     second one: the client waits for its own orphan forever, and so does
//     everyone behind it.
//   - With byName, contenders are ordered by their whole name, GUID prefix
//     included, instead of by sequence number: a later contender with a
//     smaller GUID jumps ahead of the holder, and both hold.
type naiveLock struct {
	conn   zksim.Conn
	dir    string
	guid   string
	byName bool
	// blind makes a contender that is not first check once and then wait
	// without a watch: the election whose candidates check leadership
	// without watching. When the leader goes, nobody notices.
	blind bool
	// reader makes it a reader of a read-write lock: its node is named
	// "read-" (not "lock-"), it looks at readers' and writers' nodes, and
	// it waits for the node just ahead of it, whatever its kind: readers
	// queue behind readers (the mistake).
	reader bool
	// tidy makes it find its node by GUID however its create ended
	// (cancelled, or a listing failed), so that it leaves no orphan: the
	// flaw it shows is its only one. The lock ordering by name, the blind
	// election, the reader and the expiry-blind holder are tidy.
	tidy bool

	path  string
	token int64
	held  atomic.Bool
}

func (l *naiveLock) Exclusive() bool { return !l.reader }

// marker is the name part before our node's sequence number.
func (l *naiveLock) marker() string {
	if l.reader {
		return "read-"
	}
	return "lock-"
}

// contender reports whether a child of the directory is a contender node
// this lock looks at.
func (l *naiveLock) contender(name string) bool {
	if l.reader {
		return strings.Contains(name, "read-") || strings.Contains(name, "write-")
	}
	return strings.Contains(name, "lock-")
}
func (l *naiveLock) Token() int64 { return l.token }

func (l *naiveLock) State() recipes.HoldState {
	if !l.held.Load() {
		return recipes.NotHeld
	}
	switch l.conn.State() {
	case zksim.StateConnected:
		return recipes.Held
	case zksim.StateExpired, zksim.StateClosed:
		return recipes.Lost
	}
	return recipes.Doubtful
}

func (l *naiveLock) Acquire(ctx context.Context) (err error) {
	if err := l.create(ctx); err != nil {
		return err
	}
	defer func() {
		if err != nil { // give up our (latest) node, as a careful lock does
			_ = retryLoss(context.WithoutCancel(ctx), l.conn, func() error {
				return l.conn.Delete(context.WithoutCancel(ctx), l.path, -1)
			})
		}
	}()
	for {
		var names []string
		err := retryLoss(ctx, l.conn, func() error {
			var err error
			names, _, err = l.conn.Children(ctx, l.dir)
			return err
		})
		if err != nil {
			return err
		}
		names = slices.DeleteFunc(names, func(n string) bool { return !l.contender(n) })
		if l.byName {
			slices.Sort(names)
		} else {
			slices.SortFunc(names, compareSeq)
		}
		me := slices.Index(names, path.Base(l.path))
		if me < 0 {
			return errors.New("naive lock: our node vanished")
		}
		if me > 0 && l.blind {
			<-ctx.Done()
			return ctx.Err()
		}
		if me == 0 {
			var st *zksim.Stat
			err := retryLoss(ctx, l.conn, func() error {
				var err error
				_, st, err = l.conn.Exists(ctx, l.path)
				return err
			})
			if err != nil || st == nil {
				return fmt.Errorf("naive lock: own node: %v", err)
			}
			l.token = st.Czxid
			l.held.Store(true)
			return nil
		}
		var (
			ok bool
			w  <-chan zksim.Event
		)
		err = retryLoss(ctx, l.conn, func() error {
			var err error
			ok, _, w, err = l.conn.ExistsW(ctx, l.dir+"/"+names[me-1])
			return err
		})
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// create makes our contender node; without a GUID it sends the create
// again after a connection loss (the mistake).
func (l *naiveLock) create(ctx context.Context) (err error) {
	prefix := l.dir + "/" + l.marker()
	if l.guid != "" {
		prefix = l.dir + "/_c_" + l.guid + "-" + l.marker()
	}
	lost := false // a create may have been applied without our knowing
	defer func() {
		if err != nil && lost {
			l.abandon(ctx)
		}
	}()
	for {
		p, err := l.conn.Create(ctx, prefix, nil, zksim.ModeEphemeralSequential, zksim.OpenACL())
		switch {
		case err == nil:
			l.path = p
			return nil
		case errors.Is(err, zksim.ErrNoNode):
			_, err := l.conn.Create(ctx, l.dir, nil, zksim.ModePersistent, zksim.OpenACL())
			if err != nil && !errors.Is(err, zksim.ErrNodeExists) && !errors.Is(err, zksim.ErrConnectionLoss) {
				return err
			}
		case errors.Is(err, zksim.ErrConnectionLoss):
			lost = true
			if err := waitConnected(ctx, l.conn); err != nil {
				return err
			}
			if l.guid == "" {
				continue // the mistake: the first create may have been applied
			}
			var names []string
			if l.tidy {
				// A tidy lock looks for its node until it can tell.
				err = retryLoss(ctx, l.conn, func() error {
					var err error
					names, _, err = l.conn.Children(ctx, l.dir)
					return err
				})
			} else {
				names, _, err = l.conn.Children(ctx, l.dir)
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				continue
			}
			for _, n := range names {
				if strings.HasPrefix(n, "_c_"+l.guid+"-") {
					l.path = l.dir + "/" + n
					return nil
				}
			}
		default:
			// A reader knows the create may still be applied after its
			// call gave up, and abandons by GUID.
			lost = lost || (l.tidy && ctx.Err() != nil)
			return err
		}
	}
}

// abandon deletes, when it can, the node a create that may have been
// applied made: with a GUID it is found by name; without one it cannot be
// found at all (the mistake).
func (l *naiveLock) abandon(ctx context.Context) {
	if l.guid == "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	var names []string
	if retryLoss(ctx, l.conn, func() error {
		var err error
		names, _, err = l.conn.Children(ctx, l.dir)
		return err
	}) != nil {
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, "_c_"+l.guid+"-") {
			_ = retryLoss(ctx, l.conn, func() error { return l.conn.Delete(ctx, l.dir+"/"+n, -1) })
		}
	}
}

func (l *naiveLock) Release(ctx context.Context) error {
	// A hold being released holds no more: its State says so at once, as
	// the recipes' do (else a holder whose delete's reply is held back
	// would still hold as the next one is granted: not the flaw).
	l.held.Store(false)
	err := retryLoss(ctx, l.conn, func() error { return l.conn.Delete(ctx, l.path, -1) })
	if err == nil || errors.Is(err, zksim.ErrNoNode) || errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing) {
		l.held.Store(false)
		return nil
	}
	return err
}

// waitConnected blocks until conn is connected; it fails once the session
// is over or ctx is done.
func waitConnected(ctx context.Context, conn zksim.Conn) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := conn.SessionEvents(sctx)
	for {
		switch conn.State() {
		case zksim.StateConnected:
			return nil
		case zksim.StateExpired:
			return zksim.ErrSessionExpired
		case zksim.StateClosed:
			return zksim.ErrClosing
		}
		select {
		case _, ok := <-events:
			if !ok {
				if err := ctx.Err(); err != nil {
					return err
				}
				return zksim.ErrClosing
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// retryLoss calls f again after every connection loss, once connected.
// Only for calls that are safe to repeat.
func retryLoss(ctx context.Context, conn zksim.Conn, f func() error) error {
	for {
		err := f()
		if !errors.Is(err, zksim.ErrConnectionLoss) {
			return err
		}
		if err := waitConnected(ctx, conn); err != nil {
			return err
		}
	}
}

// nextGUID returns a GUID for a new acquisition by c: prefix (drawn by the
// machine when the order of names matters) in hex, then the client and a
// count of c's acquisitions, so that no two acquisitions share one and a
// run is the same every time its draws are.
func nextGUID(c *client, prefix int) string {
	c.acquisitions++
	// In the shape of a version 4 UUID, as the machines check protected
	// names (names.go), ordered by prefix, client and acquisition.
	return fmt.Sprintf("%02x%d%05d-0000-4000-8000-000000000000", prefix, c.idx, c.acquisitions)
}

// blindElectionKind is the election machine's kind for candidates that
// check leadership once, without a watch (with protected names, ordered by
// sequence: only that one mistake).
var blindElectionKind = lockKind{
	name: "blind leadership",
	dirs: []string{electionDir},
	newHold: func(_ *rapid.T, c *client) holdable {
		// Tidy: being blind is its only flaw.
		return &naiveLock{conn: c.conn, dir: electionDir, guid: nextGUID(c, 0), blind: true, tidy: true}
	},
}

// naiveKind is the lock machine's kind for a naiveLock. With byName, each
// acquisition draws a GUID (the client index keeps them distinct), so the
// order of names is part of the schedule rapid shrinks.
func naiveKind(withGUID, byName bool) lockKind {
	return lockKind{
		name: "naive lock",
		dirs: []string{lockDir},
		newHold: func(t *rapid.T, c *client) holdable {
			// With GUIDs it is tidy: ordering by name is its only flaw.
			l := &naiveLock{conn: c.conn, dir: lockDir, byName: byName, tidy: withGUID}
			if withGUID {
				g := 0
				if t != nil {
					g = rapid.IntRange(0, 255).Draw(t, "guid")
				}
				l.guid = nextGUID(c, g)
			}
			return l
		},
	}
}

// queueingReaderKind is the read-write lock whose readers queue behind
// readers: writers are the real recipe's, readers naiveLocks that wait
// for the node just ahead of theirs, reader or writer.
var queueingReaderKind = lockKind{
	name:        "read-write lock, readers queueing",
	dirs:        []string{lockDir},
	readMarker:  "read-",
	writeMarker: "write-",
	newHold: func(t *rapid.T, c *client) holdable {
		write := c.idx%2 == 0
		if t != nil {
			write = rapid.Bool().Draw(t, "write")
		}
		if write {
			return rwHold{lock.NewRWMutex(c.conn, lockDir).Writer(), true}
		}
		return &naiveLock{conn: c.conn, dir: lockDir, guid: nextGUID(c, 0), reader: true, tidy: true}
	},
}

// staleHolderKind is the lock whose holder does not notice that its
// session expired: its State says Held for as long as it has not released,
// whatever happened to the session (the GUID and order are right).
var staleHolderKind = lockKind{
	name: "lock, blind to expiry",
	dirs: []string{lockDir},
	newHold: func(_ *rapid.T, c *client) holdable {
		return &blindHolder{naiveLock{conn: c.conn, dir: lockDir, guid: nextGUID(c, 0), tidy: true}}
	},
}

// blindHolder is a naiveLock whose State ignores the session.
type blindHolder struct{ naiveLock }

func (b *blindHolder) State() recipes.HoldState {
	if b.held.Load() {
		return recipes.Held
	}
	return recipes.NotHeld
}
