// Package contend is the core shared by the lock, read-write lock and
// election recipes: create a protected ephemeral-sequential node, wait
// (with a predecessor watch) until a rule says the node holds, check that
// our session owns it, and clean up on every way out ([Contender]); and
// keep the current or last hold of a Mutex or an Election ([Holder]).
package contend
