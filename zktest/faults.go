package zktest

import (
	"sync/atomic"

	"github.com/zksim/zksim/zkmem"
)

// Flaky returns a zkmem fault hook for chaos cases: it loses the reply of
// every k-th request and drops every (2k+1)-th request before the server
// sees it.
func Flaky(k int) func(zkmem.Request) zkmem.Fault {
	var n atomic.Int32
	return func(zkmem.Request) zkmem.Fault {
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
func NthRequest(op string, n int, fault zkmem.Fault) func(zkmem.Request) zkmem.Fault {
	var seen atomic.Int32
	return func(r zkmem.Request) zkmem.Fault {
		if r.Op == op && int(seen.Add(1)) == n {
			return fault
		}
		return zkmem.NoFault
	}
}
