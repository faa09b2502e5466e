package zktest

import (
	"sync/atomic"

	"github.com/zksim/zksim/zkmem"
)

// Flaky returns a zkmem fault hook for chaos cases: it loses the reply of
// every k-th request and drops every (2k+1)-th request before the server
// sees it.
func Flaky(k int) zkmem.FaultHook {
	var n atomic.Int32
	return func(_ zkmem.Request, armed zkmem.ConnFault) zkmem.ConnFault {
		if armed != zkmem.NoFault {
			return armed
		}
		switch i := int(n.Add(1)); {
		case i%k == 0:
			return zkmem.LoseReply
		case i%(2*k+1) == 0:
			return zkmem.DropRequest
		}
		return zkmem.NoFault
	}
}

// NthRequest returns a zkmem fault hook that applies fault to the n-th
// request with op (counting from 1), once.
func NthRequest(op zkmem.OpCode, n int, fault zkmem.ConnFault) zkmem.FaultHook {
	var seen atomic.Int32
	return func(r zkmem.Request, armed zkmem.ConnFault) zkmem.ConnFault {
		if armed != zkmem.NoFault {
			return armed
		}
		if r.Op == op && int(seen.Add(1)) == n {
			return fault
		}
		return zkmem.NoFault
	}
}
