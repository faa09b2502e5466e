// Package backendtest runs the recipes' test cases on every backend: on
// zkmem, each case in its own testing/synctest bubble with a fresh server
// (virtual time, so timeouts cost nothing), and on a real ZooKeeper from
// zkserver, shared by the test binary with one root path per case. The real
// half skips with an installation hint outside CI and must run under
// CI=true (zkserver decides).
//
// Cases written against Env run unchanged on both; fault cases that need
// zkmem's controls use Env.Mem and are listed only for zkmem.
package backendtest
