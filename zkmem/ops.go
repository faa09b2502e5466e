package zkmem

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zksim/zksim"
)

// The server side of every operation, called with Server.mu held. Writes
// follow PrepRequestProcessor's order of checks exactly, since that order
// decides which error a caller sees.

func badPath(path string) error {
	return fmt.Errorf("%w: invalid path %q", zksim.ErrBadArguments, path)
}

// validateCreatePath mirrors validatePathForCreate: the server's own cheap
// check before it looks for the parent.
func validateCreatePath(path string) (string, error) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || strings.IndexByte(path, 0) >= 0 {
		return "", badPath(path)
	}
	if i == 0 {
		return "/", nil
	}
	return path[:i], nil
}

// validateTTL mirrors EphemeralType.validateTTL.
func validateTTL(mode zksim.CreateMode, ttl int64) error {
	if mode.IsTTL() {
		if ttl <= 0 || ttl > zksim.MaxTTLMillis {
			return fmt.Errorf("%w: ttl %dms must be in [1, %d]", zksim.ErrBadArguments, ttl, int64(zksim.MaxTTLMillis))
		}
	} else if ttl >= 0 {
		return fmt.Errorf("%w: ttl not valid for mode %v", zksim.ErrBadArguments, mode)
	}
	return nil
}

// create applies a create. ttl is -1 for a plain Create.
func (s *Server) create(t *txn, sess *Session, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl int64) (string, *node, error) {
	if !mode.Valid() {
		return "", nil, fmt.Errorf("%w: invalid create mode %d", zksim.ErrBadArguments, int32(mode))
	}
	if mode.IsTTL() && !s.opts.ExtendedTypes {
		return "", nil, zksim.ErrUnimplemented
	}
	if err := validateTTL(mode, ttl); err != nil {
		return "", nil, err
	}
	parentPath, err := validateCreatePath(path)
	if err != nil {
		return "", nil, err
	}
	fixed, err := fixupACL(acl, sess.auth, s.opts.SASLUsers != nil)
	if err != nil {
		return "", nil, err
	}
	parent := s.tree.get(parentPath)
	if parent == nil {
		return "", nil, zksim.ErrNoNode
	}
	if err := checkACL(parent.acl, zksim.PermCreate, sess.auth); err != nil {
		return "", nil, err
	}
	if mode.IsSequential() {
		path = sequentialName(path, parent.cversion)
	}
	if err := zksim.ValidatePath(path, false); err != nil {
		return "", nil, err
	}
	if s.tree.get(path) != nil {
		return "", nil, zksim.ErrNodeExists
	}
	if parent.kind == kindEphemeral {
		return "", nil, zksim.ErrNoChildrenForEphemerals
	}
	now := t.clock()
	n := &node{
		path:   path,
		parent: parent,
		nameAt: int32(strings.LastIndexByte(path, '/') + 1),
		data:   data,
		acl:    s.acls.intern(fixed),
		czxid:  t.zxid,
		mzxid:  t.zxid,
		pzxid:  t.zxid,
		ctime:  now,
		mtime:  now,
	}
	if s.seqStart != nil && !mode.IsContainer() {
		n.cversion = s.seqStart(path)
	}
	switch {
	case mode.IsEphemeral():
		n.kind, n.owner = kindEphemeral, sess.id
	case mode.IsContainer():
		n.kind = kindContainer
	case mode.IsTTL():
		n.kind, n.owner = kindTTL, ttl
	}
	oldPzxid := parent.pzxid
	parent.cversion++
	parent.pzxid = t.zxid
	if !t.multi {
		s.tree.insert(n)
		s.track(n)
	} else { // see txn.onUndo
		unInsert := s.tree.insertUndoable(n)
		unTrack := s.trackUndoable(n)
		t.onUndo(func() {
			unTrack()
			unInsert()
			parent.cversion--
			parent.pzxid = oldPzxid
		})
	}
	t.fire(zksim.EventNodeCreated, path, n.acl)
	t.fire(zksim.EventNodeChildrenChanged, parentPath, parent.acl)
	return path, n, nil
}

// sequentialName appends the sequence suffix: Java's %010d of the parent's
// cversion, which keeps a minus sign after the int32 wrap (-2147483648).
func sequentialName(prefix string, seq int32) string {
	buf := make([]byte, 0, len(prefix)+11)
	buf = append(buf, prefix...)
	v := int64(seq)
	if v < 0 {
		buf = append(buf, '-')
		v = -v
		digits := strconv.AppendInt(nil, v, 10)
		for i := len(digits); i < 9; i++ {
			buf = append(buf, '0')
		}
		return string(append(buf, digits...))
	}
	var digits [10]byte
	for i := 9; i >= 0; i-- {
		digits[i] = byte('0' + v%10)
		v /= 10
	}
	return string(append(buf, digits[:]...))
}

// track records a new node with the session or reaper that manages it.
func (s *Server) track(n *node) {
	switch n.kind {
	case kindEphemeral:
		if sess := s.sessions[n.owner]; sess != nil {
			sess.addEphemeral(n, false)
		}
	case kindContainer, kindTTL:
		s.reapable.ReplaceOrInsert(n)
		s.armReaper()
	}
}

// trackUndoable is track for a multi: it returns how to undo it, leaving
// the session's set of ephemerals exactly as it was.
func (s *Server) trackUndoable(n *node) (undo func()) {
	if n.kind == kindEphemeral {
		if sess := s.sessions[n.owner]; sess != nil {
			return sess.addEphemeral(n, true)
		}
		return func() {}
	}
	s.track(n)
	return func() { s.untrack(n) }
}

// untrackUndoable is untrack for a multi: it returns how to undo it,
// putting an ephemeral back in the very place it had in its session's set.
func (s *Server) untrackUndoable(n *node) (undo func()) {
	if n.kind == kindEphemeral {
		if sess := s.sessions[n.owner]; sess != nil {
			return sess.removeEphemeral(n, true)
		}
		return func() {}
	}
	s.untrack(n)
	return func() { s.track(n) }
}

func (s *Server) untrack(n *node) {
	switch n.kind {
	case kindEphemeral:
		if sess := s.sessions[n.owner]; sess != nil {
			sess.removeEphemeral(n, false)
		}
	case kindContainer, kindTTL:
		s.reapable.Delete(n)
	}
}

// deleteNode removes a childless node (DataTree.deleteNode).
func (s *Server) deleteNode(t *txn, n *node) {
	parent := n.parent
	oldPzxid := parent.pzxid
	if !t.multi {
		s.tree.remove(n)
		s.untrack(n)
	} else { // see txn.onUndo
		unRemove := s.tree.removeUndoable(n)
		unUntrack := s.untrackUndoable(n)
		t.onUndo(func() {
			parent.pzxid = oldPzxid
			unRemove()
			unUntrack()
		})
	}
	parent.pzxid = t.zxid
	t.fire(zksim.EventNodeDeleted, n.path, n.acl)
	t.fire(zksim.EventNodeChildrenChanged, parent.path, parent.acl)
}

func checkVersion(current, expected int32) error {
	if expected != -1 && expected != current {
		return zksim.ErrBadVersion
	}
	return nil
}

func (s *Server) delete(t *txn, sess *Session, path string, version int32) error {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || strings.IndexByte(path, 0) >= 0 || isSpecialPath(path) {
		return fmt.Errorf("%w: cannot delete %q", zksim.ErrBadArguments, path)
	}
	parent := s.tree.get(parentPath(path))
	if parent == nil {
		return zksim.ErrNoNode
	}
	if err := checkACL(parent.acl, zksim.PermDelete, sess.auth); err != nil {
		return err
	}
	n := s.tree.get(path)
	if n == nil {
		return zksim.ErrNoNode
	}
	if err := checkVersion(n.version, version); err != nil {
		return err
	}
	if n.numChildren() > 0 {
		return zksim.ErrNotEmpty
	}
	s.deleteNode(t, n)
	return nil
}

func (s *Server) setData(t *txn, sess *Session, path string, data []byte, version int32) (*node, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, err
	}
	n := s.tree.get(path)
	if n == nil {
		return nil, zksim.ErrNoNode
	}
	if err := checkACL(n.acl, zksim.PermWrite, sess.auth); err != nil {
		return nil, err
	}
	if err := checkVersion(n.version, version); err != nil {
		return nil, err
	}
	oldData, oldVersion, oldMzxid, oldMtime := n.data, n.version, n.mzxid, n.mtime
	n.data = data
	n.version++
	n.mzxid = t.zxid
	n.mtime = t.clock()
	if t.multi { // see txn.onUndo
		t.onUndo(func() { n.data, n.version, n.mzxid, n.mtime = oldData, oldVersion, oldMzxid, oldMtime })
	}
	t.fire(zksim.EventNodeDataChanged, path, n.acl)
	return n, nil
}

func (s *Server) check(sess *Session, path string, version int32) error {
	if err := zksim.ValidatePath(path, false); err != nil {
		return err
	}
	n := s.tree.get(path)
	if n == nil {
		return zksim.ErrNoNode
	}
	if err := checkACL(n.acl, zksim.PermRead, sess.auth); err != nil {
		return err
	}
	return checkVersion(n.version, version)
}

func (s *Server) setACL(t *txn, sess *Session, path string, acl []zksim.ACL, version int32) (*node, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, err
	}
	fixed, err := fixupACL(acl, sess.auth, s.opts.SASLUsers != nil)
	if err != nil {
		return nil, err
	}
	n := s.tree.get(path)
	if n == nil {
		return nil, zksim.ErrNoNode
	}
	if err := checkACL(n.acl, zksim.PermAdmin, sess.auth); err != nil {
		return nil, err
	}
	if err := checkVersion(n.aversion, version); err != nil {
		return nil, err
	}
	n.acl = s.acls.intern(fixed)
	n.aversion++
	return n, nil
}

// Reads (FinalRequestProcessor).

func (s *Server) getData(sess *Session, path string) (*node, error) {
	n := s.tree.get(path)
	if n == nil {
		return nil, zksim.ErrNoNode
	}
	if err := checkACL(n.acl, zksim.PermRead, sess.auth); err != nil {
		return nil, err
	}
	return n, nil
}

func (s *Server) getACL(sess *Session, path string) ([]zksim.ACL, *zksim.Stat, error) {
	n := s.tree.get(path)
	if n == nil {
		return nil, nil, zksim.ErrNoNode
	}
	if err := checkACL(n.acl, zksim.PermRead|zksim.PermAdmin, sess.auth); err != nil {
		return nil, nil, err
	}
	acl := append([]zksim.ACL(nil), n.acl.entries...)
	if checkACL(n.acl, zksim.PermAdmin, sess.auth) != nil {
		// Without ADMIN, digest ids are shown without their password hash.
		for i, a := range acl {
			if a.Scheme == "digest" {
				if user, _, ok := strings.Cut(a.ID, ":"); ok {
					acl[i].ID = user + ":x"
				}
			}
		}
	}
	return acl, n.stat(), nil
}
