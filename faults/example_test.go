package faults_test

import (
	"fmt"
	"time"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/zkmem"
)

// A policy is built from faults and effects, and prints itself: the
// simulator writes it at the top of every trace.
func Example() {
	policy := faults.Combine(
		// Client 0's session expires at the 40th step.
		faults.At(40, faults.Expire(0)),
		// One create in ten, from clients 1 and 2, loses its reply.
		faults.LoseReply.If(faults.All(faults.OnOp(zkmem.OpCreate), faults.ForClient(1, 2), faults.Randomly(0.1))),
		// After 5s of virtual time, every request is 20ms slower.
		faults.Slow(20*time.Millisecond).If(faults.AfterTime(5*time.Second)),
	)
	fmt.Println(policy)
	// Output:
	// (Combine (At 40 Expire(c0)) (LoseReply (All (OnOp create) (ForClient c1 c2) (Randomly 0.1))) ((Slow 20ms) (AfterTime 5s)))
}

// Mix draws every fault of the catalogue from the seed, each step with
// probability p. It sizes its pauses by the session timeout of the World it
// runs in, which it learns when the World starts; the trace then prints it
// in full, for a 10s timeout:
//
//	(Combine (Sometimes 0.005 Disconnect(c?, 200ms) Disconnect(c?, 1s) Expire(c?) Pause(c?, 15s) Pause(c?, 3.333333333s) Delay(c?, 500ms)) (LoseReply (Randomly 0.02)) (DropRequest (Randomly 0.02)) (ShuffleChildren (All (OnOp getChildren) (Randomly 0.5))))
func ExampleMix() {
	fmt.Println(faults.Mix(0.02))
	// Output:
	// (Mix 0.02)
}
