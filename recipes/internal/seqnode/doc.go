// Package seqnode holds what the recipes share about sequential znodes:
// parsing and ordering their sequence numbers (correct across the int32
// wrap), Curator-style protected names (_c_<guid>-<name><sequence>), a
// create that recovers from a lost reply by finding its GUID again, and
// creating a recipe's parent path.
package seqnode
