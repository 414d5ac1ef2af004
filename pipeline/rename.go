package pipeline

import "os"

// exchangeByRenames swaps a and b through a third name.
func exchangeByRenames(a, b string) error {
	mid := a + ".swap"
	if err := os.Rename(b, mid); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		_ = os.Rename(mid, b)
		return err
	}
	return os.Rename(mid, a)
}
