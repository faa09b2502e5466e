package gozk

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
)

// Multi applies ops atomically and returns one result per op.
//
// On success a create's result has the created Path and a set's the new
// Stat. When an op fails, the returned error is the first failure's, ops
// before it have a nil Err, the failing op its own error and later ops
// zksim.ErrRuntimeInconsistency: this is what the server sends, and
// go-zookeeper passes it through (its result for a code it has no name for,
// such as -2, is mapped back by code). When the call fails as a whole
// (connection loss, a closed Conn) the results are nil.
//
// go-zookeeper v1.0.4 cannot carry container or TTL creates inside a multi:
// it has no TTL create request for multi, and it cannot decode the server's
// reply to a container create although the server applies it. Multi refuses
// such ops before sending anything, with an error wrapping
// zksim.ErrUnimplemented.
func (c *Conn) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	reqs := make([]any, len(ops))
	for i, op := range ops {
		req, err := toZKOp(op)
		if err != nil {
			return nil, fmt.Errorf("op %d: %w", i, err)
		}
		reqs[i] = req
	}
	var resps []zk.MultiResponse
	err := c.call(ctx, func() (err error) {
		resps, err = c.zk.Multi(reqs...)
		return err
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// ctx ended first: the call may still be running and writing resps.
		return nil, err
	}
	if len(resps) != len(ops) {
		// No per-op results: the call failed as a whole.
		if err == nil {
			err = fmt.Errorf("%w: the server answered %d results for %d ops", zksim.ErrMarshallingError, len(resps), len(ops))
		}
		return nil, err
	}
	results := make([]zksim.OpResult, len(ops))
	for i, r := range resps {
		results[i].Err = mapError(r.Error)
		if results[i].Err != nil || err != nil {
			continue
		}
		switch ops[i].(type) {
		case *zksim.CreateOp:
			results[i].Path = r.String
		case *zksim.SetOp:
			results[i].Stat = fromZKStat(r.Stat)
		}
	}
	return results, err
}

// toZKOp converts one op to the request go-zookeeper's Multi sends.
func toZKOp(op zksim.Op) (any, error) {
	switch op := op.(type) {
	case *zksim.CreateOp:
		switch {
		case op == nil:
		case !op.Mode.Valid():
			return nil, fmt.Errorf("%w: unknown create mode %d", zksim.ErrBadArguments, int32(op.Mode))
		case op.Mode.IsContainer(), op.Mode.IsTTL():
			return nil, fmt.Errorf("%w: go-zookeeper cannot send a %v create inside a multi", zksim.ErrUnimplemented, op.Mode)
		default:
			return &zk.CreateRequest{Path: op.Path, Data: op.Data, Acl: toZKACL(op.ACL), Flags: int32(op.Mode)}, nil
		}
	case *zksim.DeleteOp:
		if op != nil {
			return &zk.DeleteRequest{Path: op.Path, Version: op.Version}, nil
		}
	case *zksim.SetOp:
		if op != nil {
			return &zk.SetDataRequest{Path: op.Path, Data: op.Data, Version: op.Version}, nil
		}
	case *zksim.CheckOp:
		if op != nil {
			return &zk.CheckVersionRequest{Path: op.Path, Version: op.Version}, nil
		}
	}
	return nil, fmt.Errorf("%w: unsupported op %T", zksim.ErrBadArguments, op)
}
