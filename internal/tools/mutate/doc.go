// Command mutate measures how well a test suite catches bugs in a set of
// packages: it makes small changes (mutants) to their non-test source, one
// at a time, runs a killer test against each and reports which mutants the
// tests caught (killed) and which they missed (survived).
//
// It is meant for the property suite over recipes/:
//
//	nice -n 15 go run ./internal/tools/mutate -sample 60 -seed 1 -json /tmp/mutants.json ./recipes/...
//
// A mutant never touches the source tree. The mutated file is written to a
// temporary directory and handed to the compiler with go test -overlay; the
// killer is the test binary of -killer (default ./property_test) built with
// that overlay, run in its package directory with -test.run set to the
// tests -map names for the mutated package, -test.failfast and
// -killer-flags (default -rapid.nofailfile), and killed after -timeout (2m).
//
// The operators are: cond-boundary (< ↔ <=, > ↔ >=), negate (== ↔ !=),
// logical (&& ↔ ||), remove-call (a statement that is only a call, or a
// defer, is deleted), if-err-false (if err != nil becomes if (err != nil)
// && false), return-nil (an error result such as err or fmt.Errorf(...)
// becomes nil), int-inc and int-dec (an integer literal plus or minus
// one), branch-swap (break ↔ continue). A mutant's id is
// file:line:col:operator, stable as long as the file does not change above
// it; its key is file:operator:column:"line" (the column in the line
// without its indentation, the line's text quoted, #n appended for the
// nth of a file's identical keys), stable until the line itself changes;
// -list prints both.
//
// Each mutant ends as killed (the killer failed), survived (it passed),
// timeout (it ran past its limit: -timeout, or -timeout-factor times the
// baseline run of its test pattern if that is longer, so that a survivor
// on a loaded machine is not taken for a hang; the baseline's own runs
// may take 10 minutes) or uncompilable (the
// mutant does not build; not counted). A mutant listed in the -equivalent
// file (one key, or id, and a reason per line) is equivalent: no test can
// tell it from the original, and it is left out of the score. The score
// is
//
//	killed / (total - equivalent - uncompilable - not run)
//
// where "not run" are the mutants an interrupted run did not reach; a
// timeout counts as not killed. For a killed mutant the report gives the
// time to kill (the killer's run, not its build, shrinking included),
// how many checks rapid ran before the failure, and the length of the
// shrunk failing schedule: the number of "[rapid] draw action" lines rapid
// printed when it replayed the minimal failure. A kill by the replay of a
// committed fail file (rapid names the file alone, no seed) is marked
// "replay": no check ran, and the schedule is the file's under the
// mutant, not a shrink. The report gives the CPU time of each run beside
// its wall time, the failing test's own time (the run less the tests that
// passed before it, when the test logs how long it waited to start, as
// the property suite's do), and the fast score: the mutants killed within 30 s with
// a schedule of at most 15 actions (or none: a panic), over the score's
// denominator.
//
// -list lists the mutants without running them; -sample N with -seed S
// runs a deterministic subset (the same for the same mutants and seed);
// -only runs the mutants with the given ids; -out keeps each killer's
// output; -json writes the report as JSON, after every mutant, so an
// interrupted run keeps what it measured; -resume takes the mutants a
// saved report already measured from it (a larger -sample with the same
// -seed holds the smaller one, so it can grow a run). After reviewing
// survivors, add the equivalent ones to the -equivalent file and report
// again without running anything:
//
//	go run ./internal/tools/mutate -rescore /tmp/mutants.json
package main
