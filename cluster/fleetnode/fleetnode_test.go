package fleetnode_test

import (
	"github.com/trawl-crawler/trawl/cluster/fleetnode"
	"github.com/trawl-crawler/trawl/node"
)

// The node the fleet drives is a fleetnode.Node.
var _ fleetnode.Node = (*node.Node)(nil)
