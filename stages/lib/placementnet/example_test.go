package placementnet_test

import (
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/placementnet"
	"github.com/mlsched/mlsched/stages/lib/sim"
)

// A decision is looked up by its cell in standardized space before the
// network is asked; here z is given, where a simulator would fill it with
// Network.Standardize from the decision's features.
func ExampleCache() {
	c, err := placementnet.NewCache(placementnet.CacheOptions{Step: 0.1, Size: 2})
	if err != nil {
		panic(err)
	}
	z := [sim.NumFeatures]float32{0.42, -0.07, 1.35}
	k, _ := c.Key(&z)
	fmt.Println("cell", k)
	if _, ok := c.Get(k); !ok {
		c.Put(k, 0.83) // the network's answer, from Network.Eval
	}

	near := z
	near[0] = 0.48 // the same cell: [0.4, 0.5)
	k, _ = c.Key(&near)
	p, ok := c.Get(k)
	fmt.Println("near:", p, ok)

	far := z
	far[1] = 0.03 // the next cell up in feature 1
	k, _ = c.Key(&far)
	_, ok = c.Get(k)
	fmt.Println("far:", ok)
	fmt.Printf("%+v\n", c.Stats())
	// Output:
	// cell [4 -1 13 0 0 0 0 0 0 0]
	// near: 0.83 true
	// far: false
	// {Hits:1 Misses:2 Evictions:0 Len:1 Size:2}
}
