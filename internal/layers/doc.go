// Package layers holds the test that keeps trawl's import graph in layers:
// every package belongs to exactly one layer of the table in layers_test.go,
// and a package imports only from its own layer or the layers below it.
// The benchmark harnesses, the test kit and the end-to-end tests stand
// beside the layers: they may import any layer, and only the command and
// its helpers import them. A new package fails the test until it is given a
// layer, so the picture in the README's layout section stays true.
package layers
