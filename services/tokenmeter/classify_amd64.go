package tokenmeter

import "unsafe"

// classifyBlocks classifies len(dst) blocks of 64 ASCII bytes from src with
// SSE2 compares (part of the amd64 baseline); classifyPlanes is the
// portable version and the tests hold the two to the same result.
func classifyBlocks(dst []classMasks, src string) {
	if len(dst) == 0 {
		return
	}
	_ = src[64*len(dst)-1]
	classifySSE2(&dst[0], unsafe.StringData(src), len(dst))
}

// classifySSE2 writes blocks classMasks from the 64·blocks bytes at src.
//
//go:noescape
func classifySSE2(dst *classMasks, src *byte, blocks int)
