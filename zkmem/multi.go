package zkmem

import (
	"fmt"

	"github.com/zksim/zksim"
)

// multi applies ops as one transaction (PrepRequestProcessor's multi and
// DataTree.processTxn). Called with srv.mu held.
func (s *Server) multi(sess *Session, ops []zksim.Op) ([]zksim.OpResult, error) {
	t := s.begin()
	t.multi = true
	results := make([]zksim.OpResult, len(ops))
	var failed error
	for i, op := range ops {
		if failed != nil {
			results[i].Err = zksim.ErrRuntimeInconsistency
			continue
		}
		var err error
		switch o := op.(type) {
		case *zksim.CreateOp:
			ttl := int64(-1)
			if o.Mode.IsTTL() {
				ttl = o.TTL.Milliseconds()
			}
			var n *node
			results[i].Path, n, err = s.create(t, sess, o.Path, copyBytes(o.Data), o.Mode, o.ACL, ttl)
			if _, inProcess := sess.sink.(*connSink); !inProcess && err == nil && (o.Mode.IsTTL() || o.Mode.IsContainer()) {
				results[i].Stat = n.stat() // a wire client's createTTL or createContainer in a multi returns it
			}
		case *zksim.DeleteOp:
			err = s.delete(t, sess, o.Path, o.Version)
		case *zksim.SetOp:
			var n *node
			if n, err = s.setData(t, sess, o.Path, copyBytes(o.Data), o.Version); err == nil {
				results[i].Stat = n.stat()
			}
		case *zksim.CheckOp:
			err = s.check(sess, o.Path, o.Version)
		default:
			err = fmt.Errorf("%w: unknown multi op %T", zksim.ErrBadArguments, op)
		}
		if err != nil {
			failed = err
			t.rollback()
			for j := 0; j < i; j++ {
				results[j] = zksim.OpResult{}
			}
			results[i] = zksim.OpResult{Err: err}
		}
	}
	if failed != nil {
		s.commit(t) // an error transaction: no events, but it has a zxid
		return results, failed
	}
	s.commit(t)
	return results, nil
}
