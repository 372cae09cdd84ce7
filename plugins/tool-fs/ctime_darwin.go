package toolfs

import "syscall"

// ctimeNs is the inode change time of st in nanoseconds.
func ctimeNs(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
