package zksim

import "time"

// Op is one operation of a Multi: *CreateOp, *DeleteOp, *SetOp or *CheckOp.
type Op interface {
	// OpPath returns the path the op acts on.
	OpPath() string
	isOp()
}

// CreateOp creates a node, as Conn.Create (or Conn.CreateTTL when TTL > 0).
type CreateOp struct {
	Path string
	Data []byte
	Mode CreateMode
	ACL  []ACL
	TTL  time.Duration // for the TTL modes only
}

// DeleteOp deletes a node, as Conn.Delete.
type DeleteOp struct {
	Path    string
	Version int32
}

// SetOp sets a node's data, as Conn.Set.
type SetOp struct {
	Path    string
	Data    []byte
	Version int32
}

// CheckOp fails the multi unless the node exists with the given version
// (-1 matches any). It needs READ permission.
type CheckOp struct {
	Path    string
	Version int32
}

func (o *CreateOp) OpPath() string { return o.Path }
func (o *DeleteOp) OpPath() string { return o.Path }
func (o *SetOp) OpPath() string    { return o.Path }
func (o *CheckOp) OpPath() string  { return o.Path }

func (*CreateOp) isOp() {}
func (*DeleteOp) isOp() {}
func (*SetOp) isOp()    {}
func (*CheckOp) isOp()  {}

// OpResult is the outcome of one op of a Multi.
type OpResult struct {
	// Path is the created path, for a successful CreateOp.
	Path string
	// Stat is the new Stat, for a successful SetOp.
	Stat *Stat
	// Err is nil for an op that succeeded (or would have, in a multi that
	// failed later), the op's own error, or ErrRuntimeInconsistency for an
	// op after the one that failed.
	Err error
}
