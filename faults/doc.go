// Package faults is the catalogue of faults for the simulator in package
// zksim/sim, and the policies that place them: explicitly in a schedule, or
// drawn with a probability from the World's seed.
//
// # The catalogue
//
// Faults that strike a client at a step are [StepFault] values (a
// [sim.StepFault]), all described by one table of the catalogue and built by
// the function named after each:
//
//   - [Disconnect]: the connection drops and comes back after a while, to
//     the same session; watches are restored by the setWatches rules;
//   - [Expire]: the server expires the session (ephemerals deleted, other
//     sessions notified); the client learns when it reconnects;
//   - [Pause]: a process pause: the client neither runs requests nor
//     heartbeats while virtual time passes, so its session may expire
//     without it knowing until it resumes;
//   - [Delay]: deliveries to one client are held back while others go on
//     (delayed and reordered delivery across sessions; each session's FIFO
//     keeps its order);
//   - [LoseNextReply] and [DropNextRequest]: the connection breaks after
//     the server applied the client's next request (the reply is lost), or
//     before the request reached the server; both are armed in the
//     session's zkmem fault plane ([zkmem.Control]);
//   - [SlowServer]: every request takes longer to serve for a while;
//   - [DeleteNode] and [DeleteUnder]: a third party (an operator, a
//     cleanup job) deletes a node, a given one or a leaf below a directory
//     drawn from the seed;
//   - [FailAuth]: the client's next reconnection fails authentication (a
//     rotated SASL credential): it enters StateAuthFailed for good, every
//     call fails with ErrAuthFailed, and its session expires at the server
//     a session timeout later, as with ZooKeeper's Java client.
//
// Faults that strike a request as it reaches the server ([RequestFault] values,
// placed with [RequestFault.If] and a [Predicate]): [LoseReply], [DropRequest],
// [ShuffleChildren] (children listed in an order drawn from the seed) and
// [Slow].
//
// # The table
//
// Every fault is one row of one table, [Catalog] (an [Entry] each): its
// name; whether it is a step fault (its [Kind], how it prints, which
// client [AnyClient] stands for, which primitive of [sim.Faults] it calls)
// or a request fault (its [RequestFault], the ops it can strike); how [Swarm]
// draws it ([SwarmDraw]) and whether [Mix] does ([MixDraw]); the column of
// the coverage table ([sim.Coverage]) that counts what it struck; and how
// an exploring machine draws it ([Explore]: the name of its action, the
// processes it may strike, the durations it draws through an [Explorer],
// the action that ends it, such as Heal after Partition; for the
// ensemble's rows, the member it may strike: Lag and CatchUp, Crash and
// Restart, Isolate and Rejoin, FailLeader). Swarm, Mix, the
// machines of package harness and the recipe machines of package explore
// iterate the rows in order, so a new fault is a row, with its constructor
// (or RequestFault) and the primitive of package sim that does its work. The
// rows' order is the order of the draws: a row that Swarm, Mix or the
// machines draw changes what every seed draws (and the shrunk schedules
// of the committed fail files), a row none of them draw changes nothing.
// The ensemble's rows (Entry.Ensemble) are drawn only on an ensemble, so
// a standalone World's draws, and a standalone machine's, are what they
// were without them.
//
// # Placing faults
//
// [At] and [AtTime] place a fault at a step or a virtual time;
// [Sometimes] draws faults at random steps; [RequestFault.If] strikes the
// requests a predicate selects: [OnOp], [ForClient], [OnPath],
// [AfterStep], [AfterTime], [Randomly], [Times], combined with [All],
// [Any] and [Not]. [Combine] joins policies and [Limit] caps them. [Mix] is
// a ready-made blend of the whole catalogue, sized by the session timeout
// of the World it runs in. [Swarm] is swarm testing (Groce et al., ISSTA
// 2012): each World enables a subset of the fault kinds drawn from its
// seed, each with a drawn weight, and aims each request fault at any
// request, the writes ([OnWrite]), the multis or the deletes; the seeds together cover
// every kind, each run meets a few of them often. Predicates see the request as zkmem describes it
// ([zkmem.Request]), the client that sent it, and the World (its step and
// virtual time).
//
// Every fault, predicate and policy prints itself in one readable form,
// which is what the trace shows, for example
//
//	(LoseReply (All (OnOp create) (ForClient c2) (Times 1)))
//	(At 12 Pause(c3, 15s))
//
// Target [AnyClient] to have the client drawn from the seed when the fault
// strikes; the trace prints the client drawn.
//
// Policies and predicates keep state (counters): build fresh ones for every
// World.
package faults
