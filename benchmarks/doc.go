// Package benchmarks measures zksim: the herd effect of the recipes in the
// deterministic simulator, zkmem against a real ZooKeeper, and the results
// page (RESULTS.md) that names the command behind every figure.
//
// # The herd benchmark
//
// [MeasureHerd] puts N candidates of one [Variant] (an election or a lock,
// with predecessor watches, with watches on every candidate, or racing for
// a single node) into a simulated World (package zksim/sim) and makes the
// leader change a few times: the leader's session is expired, or the lock
// holder releases. For each change it counts, over every client, the watch
// notifications delivered, the reads issued (getChildren, getData and
// exists calls), the bytes those reads returned, and the virtual time from
// the change to the moment the next leader or holder knows it leads, under
// the cost model [HerdCost] (see [CostModelDescription]).
//
// The World runs in a testing/synctest bubble, so the figures are the same
// on every run and every machine. Small sizes run with the package tests;
// the full report (N up to 10,000: a markdown table, an SVG plot and the
// figures as JSON, written into this directory as herd.md, herd.svg and
// herd.json) is one command:
//
//	go test ./benchmarks -run TestHerdReport -herd.write -v
//
// (or zksim herd -write, inside a checkout: both run
// [RunHerdReport] and [WriteHerdReport]).
//
// The plot can be drawn again from the committed herd.json without
// measuring (a test checks that herd.svg is what herd.json draws, and that
// every panel shows each variant in its own colour, dash pattern and
// marker, with no marker covering another):
//
//	go test ./benchmarks -run TestHerdPlotCommitted -herd.replot
//
// and the same measurements are Go benchmarks:
//
//	go test ./benchmarks -run '^$' -bench Herd
//
// RESULTS.md gathers every measured figure of the project (the herd report,
// zkmem's per-operation costs, zkmem against a real server, the
// simulator's speed) with the command that produced it.
package benchmarks
