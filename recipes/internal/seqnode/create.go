package seqnode

import (
	"context"
	"errors"
	"path"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/retry"
)

// EnsurePath creates p and its missing ancestors as persistent nodes with
// acl. Nodes that already exist are fine. It retries across connection
// losses.
func EnsurePath(ctx context.Context, conn zksim.Conn, p string, acl []zksim.ACL) error {
	if p == "/" {
		return nil
	}
	return retry.Do(ctx, conn, func() error {
		_, err := conn.Create(ctx, p, nil, zksim.ModePersistent, acl)
		if errors.Is(err, zksim.ErrNoNode) {
			if err := EnsurePath(ctx, conn, path.Dir(p), acl); err != nil {
				return err
			}
			_, err = conn.Create(ctx, p, nil, zksim.ModePersistent, acl)
		}
		if errors.Is(err, zksim.ErrNodeExists) {
			return nil
		}
		return err
	})
}

// CreateProtected creates the sequential node dir/_c_<guid>-<name><seq>
// (mode must be sequential) and returns its path. It creates dir first if
// it is missing. When a create fails with connection loss it waits for the
// connection, lists dir for guid, and returns the node it finds, so a
// create whose reply was lost is adopted rather than repeated.
//
// If ctx ends while a create is outstanding the create may still be
// applied: a caller that gives up must delete by GUID (DeleteGUID).
func CreateProtected(ctx context.Context, conn zksim.Conn, dir, guid, name string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	base := Join(dir, ProtectedName(guid, name))
	for losses := 0; ; {
		p, err := conn.Create(ctx, base, data, mode, acl)
		switch {
		case err == nil:
			return p, nil
		case errors.Is(err, zksim.ErrNoNode):
			if err := EnsurePath(ctx, conn, dir, acl); err != nil {
				return "", err
			}
		case errors.Is(err, zksim.ErrConnectionLoss):
			if err := retry.Pause(ctx, conn, losses); err != nil {
				return "", err
			}
			losses++
			name, found, err := FindGUIDIn(ctx, conn, dir, guid)
			if err != nil {
				return "", err
			}
			if found {
				return Join(dir, name), nil
			}
		default:
			return "", err
		}
	}
}

// Join returns the path of the child name of dir; dir may be the root.
func Join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// FindGUIDIn lists dir (retrying across connection losses) and returns the
// child carrying guid. A missing dir holds no such child.
//
// It syncs before it lists (syncedChildren): it looks for a create of ours
// whose reply was lost, and after the connection loss the client may be
// served by a member of an ensemble that has not applied that create yet
// (the client never saw its zxid, so the member admits it); listing there
// would miss the node and the caller would create a second one.
func FindGUIDIn(ctx context.Context, conn zksim.Conn, dir, guid string) (string, bool, error) {
	children, err := syncedChildren(ctx, conn, dir)
	if errors.Is(err, zksim.ErrNoNode) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	name, found := FindGUID(children, guid)
	return name, found, nil
}

// DeleteGUID deletes every child of dir that carries guid: the cleanup of
// a protected create that was abandoned, whether or not it was applied.
// It retries across connection losses; a session that expired or a Conn
// that was closed has nothing left to delete. It syncs before it lists, as
// FindGUIDIn does, so that a member behind the create does not hide it.
func DeleteGUID(ctx context.Context, conn zksim.Conn, dir, guid string) error {
	children, err := syncedChildren(ctx, conn, dir)
	if errors.Is(err, zksim.ErrNoNode) || retry.Final(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range children {
		if HasGUID(c, guid) {
			if err := Delete(ctx, conn, Join(dir, c)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Delete deletes p, whatever its version, retrying across connection
// losses. A node that is already gone is fine, and so is a session that
// expired or a closed Conn when p is ephemeral: its nodes went with it.
func Delete(ctx context.Context, conn zksim.Conn, p string) error {
	err := retry.Do(ctx, conn, func() error { return conn.Delete(ctx, p, -1) })
	if errors.Is(err, zksim.ErrNoNode) {
		return nil
	}
	return err
}

// DeleteOwned deletes the ephemeral node p if our session owns it, and
// does nothing otherwise. Unlike Delete it looks at the owner again before
// every attempt: a delete whose reply was lost may have been applied, and
// another session may have created p since (a fixed name: a single-node
// leader, a queue item's claim); sending the delete again blindly would
// delete theirs. It retries across connection losses, and syncs before it
// looks again after one: the client may then be served by a member of an
// ensemble that has not applied the lost delete (it never saw its zxid,
// so the member admits it), where p would still look ours.
func DeleteOwned(ctx context.Context, conn zksim.Conn, p string) error {
	retried := false
	err := retry.Do(ctx, conn, func() error {
		if retried {
			if _, err := conn.Sync(ctx, p); err != nil {
				return err
			}
		}
		retried = true
		ok, st, err := conn.Exists(ctx, p)
		if err != nil || !ok || st.EphemeralOwner != conn.SessionID() {
			return err
		}
		return conn.Delete(ctx, p, -1)
	})
	if errors.Is(err, zksim.ErrNoNode) {
		return nil
	}
	return err
}

// CreateOwned creates the ephemeral node p (not sequential) and reports
// whether our session owns it: created now, or found owned by our session
// (a create whose reply was lost). It reports false, with no error, when
// another session owns p. It creates p's parent if it is missing and
// retries across connection losses.
func CreateOwned(ctx context.Context, conn zksim.Conn, p string, data []byte, acl []zksim.ACL) (bool, *zksim.Stat, error) {
	for losses := 0; ; {
		_, err := conn.Create(ctx, p, data, zksim.ModeEphemeral, acl)
		switch {
		case err == nil:
			st, err := OwnedStat(ctx, conn, p)
			if errors.Is(err, ErrNotOwner) {
				// Deleted by a third party and created by another
				// session since: the next create finds it taken.
				continue
			}
			if err != nil {
				return false, nil, err
			}
			if st != nil {
				return true, st, nil
			}
			// Deleted by someone already: try again.
		case errors.Is(err, zksim.ErrNoNode):
			if err := EnsurePath(ctx, conn, path.Dir(p), acl); err != nil {
				return false, nil, err
			}
		case errors.Is(err, zksim.ErrNodeExists):
			var st *zksim.Stat
			var ok bool
			err := retry.Do(ctx, conn, func() error {
				var err error
				ok, st, err = conn.Exists(ctx, p)
				return err
			})
			if err != nil {
				return false, nil, err
			}
			if !ok {
				continue // it went away meanwhile: try again
			}
			if st.EphemeralOwner == conn.SessionID() {
				return true, st, nil
			}
			return false, st, nil
		case errors.Is(err, zksim.ErrConnectionLoss):
			if err := retry.Pause(ctx, conn, losses); err != nil {
				return false, nil, err
			}
			losses++
		default:
			return false, nil, err
		}
	}
}

// OwnedStat returns the Stat of p if p exists and our session owns it, nil
// if p does not exist, and ErrNotOwner if another session owns it. It
// retries across connection losses.
func OwnedStat(ctx context.Context, conn zksim.Conn, p string) (*zksim.Stat, error) {
	var st *zksim.Stat
	var ok bool
	err := retry.Do(ctx, conn, func() error {
		var err error
		ok, st, err = conn.Exists(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	if st.EphemeralOwner != conn.SessionID() {
		return nil, ErrNotOwner
	}
	return st, nil
}

// ErrNotOwner says a node we created is owned by another session: a GUID
// collision, a hand-made node, or a node of a fixed name that a third
// party deleted and another session created since.
var ErrNotOwner = errors.New("recipes: node owned by another session")

// syncedChildren syncs conn's member with the leader, then lists dir,
// retrying both across connection losses.
func syncedChildren(ctx context.Context, conn zksim.Conn, dir string) ([]string, error) {
	var children []string
	err := retry.Do(ctx, conn, func() error {
		if _, err := conn.Sync(ctx, dir); err != nil {
			return err
		}
		var err error
		children, _, err = conn.Children(ctx, dir)
		return err
	})
	return children, err
}
