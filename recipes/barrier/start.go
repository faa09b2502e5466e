package barrier

import (
	"context"

	"github.com/zksim/zksim"
)

// StartBarrier lets a fixed-size group start together: Wait blocks until
// size members have arrived, then all of them go, and so does every member
// that arrives later (the start node stays). A member that dies before the
// group is complete no longer counts. Each member uses its own StartBarrier
// value.
//
// It is the first half of a DoubleBarrier without the second: use it when
// the members need not finish together. For another round use another
// directory (or delete this one once every member is done).
type StartBarrier struct{ g group }

// NewStart returns a member of the start barrier on dir for a group of
// size members. It returns an error matching zksim.ErrBadArguments when
// size is less than 1 or dir is not a valid znode path.
func NewStart(conn zksim.Conn, dir string, size int, opts ...Option) (*StartBarrier, error) {
	g, err := newGroup("NewStart", conn, dir, "start", size, opts)
	if err != nil {
		return nil, err
	}
	return &StartBarrier{g: g}, nil
}

// Wait arrives and blocks until size members have arrived (the start node
// exists), ctx is done, or the session can no longer act. On error our
// member node is deleted. Our member node stays after the start, until
// our session ends.
func (b *StartBarrier) Wait(ctx context.Context) error { return b.g.enter(ctx) }
