//go:build !amd64

package tokenmeter

// classifyBlocks classifies len(dst) blocks of 64 ASCII bytes from src.
func classifyBlocks(dst []classMasks, src string) {
	for b := range dst {
		dst[b] = classifyPlanes(src, 64*b)
	}
}
