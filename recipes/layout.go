package recipes

import "errors"

// ErrForeignNodes is what a lock, read-write lock or election returns
// (having deleted the node it created) when its directory holds contender
// nodes of another library's layout that it cannot order as that library
// does: each would ignore or misplace the other's nodes, and both could
// hold at once. The lock and election packages say which nodes each
// layout refuses, and their WithLayout options make a recipe share a
// directory with Curator's or kazoo's recipes instead.
var ErrForeignNodes = errors.New("recipes: the directory holds contender nodes of a recipe laid out otherwise (another library)")
