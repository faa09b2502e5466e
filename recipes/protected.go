package recipes

import (
	"context"
	"strings"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// CreateProtectedEphemeralSequential creates an ephemeral-sequential node
// for path and returns the path the server gave it, as go-zookeeper's
// Conn.CreateProtectedEphemeralSequential does, written against
// [zksim.Conn]. The node is created in path's parent with a protected
// name: for path "/app/lock/lock-" it is
// /app/lock/_c_<guid>-lock-<sequence>, <guid> a fresh random UUID.
//
// The GUID is what makes the create safe to retry. When a create fails
// with [zksim.ErrConnectionLoss] it may or may not have been applied; the
// function waits for the connection, lists the parent for its GUID and
// returns the node it finds, or creates again if there is none. So a lost
// reply never leaves a second, orphaned node behind (an orphan would live
// as long as the session and, in a lock or an election, block everyone
// queued behind it).
//
// Unlike go-zookeeper's, it creates the missing ancestors of path
// (persistent, with acl), and it cleans up: when it returns an error
// (ctx done, session expired, Conn closed, or an error of the server
// such as [zksim.ErrNoAuth]) it first deletes whatever node its GUID
// names, so an error means no node was left behind. That cleanup goes on
// after ctx is done, for as long as the session may be alive (see the
// package doc).
//
// Order the nodes of a directory by [SequenceOf] and [CompareSequence],
// never by name: the GUID prefix is random.
func CreateProtectedEphemeralSequential(ctx context.Context, conn zksim.Conn, path string, data []byte, acl []zksim.ACL) (created string, err error) {
	if err := zksim.ValidatePath(path, true); err != nil {
		return "", err
	}
	i := strings.LastIndexByte(path, '/')
	dir, name := path[:i], path[i+1:]
	if dir == "" {
		dir = "/"
	}
	guid := seqnode.NewGUID(conn)
	defer func() {
		if err != nil {
			cctx, cancel := retry.CleanupContext(ctx)
			defer cancel()
			_ = seqnode.DeleteGUID(cctx, conn, dir, guid)
		}
	}()
	return seqnode.CreateProtected(ctx, conn, dir, guid, name, data, zksim.ModeEphemeralSequential, acl)
}

// SequenceOf returns the sequence number the server appended to child, the
// name (not the path) of a sequential node created with the name part
// name: for "lock-", from "_c_<guid>-lock-0000000042" it returns 42. It
// returns 0 and false when child does not end in name and a sequence
// number, or name is empty.
func SequenceOf(child, name string) (int32, bool) {
	if name == "" {
		return 0, false
	}
	n, ok := seqnode.Parse(child, name)
	return n.Seq, ok
}

// CompareSequence orders two sequence numbers by creation: it returns a
// negative number when a was handed out before b, zero when they are
// equal, and a positive number otherwise. Sequence numbers are the
// parent's int32 counter, which wraps from 2147483647 to -2147483648;
// CompareSequence compares them as serial numbers (RFC 1982), so the order
// holds across the wrap for nodes created fewer than 2^31 creations apart.
func CompareSequence(a, b int32) int { return seqnode.Compare(a, b) }
