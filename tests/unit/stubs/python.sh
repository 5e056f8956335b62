#!/bin/sh
# Stub python: one line per rank with what the program would see; $$'s stdout is its log file.
out=$(readlink "/proc/$$/fd/1")
printf '%s\n' "${RANK-}|${LOCAL_RANK-}|${WORLD_SIZE-}|${NTUI_STUB_ENDPOINT-}|${MASTER_ADDR-}:${MASTER_PORT-}|${CUDA_VISIBLE_DEVICES-}|${SLURMD_NODENAME-}|${NTUI_STUB_SHIFTER-}|${NTUI_STUB_RDZV_CONF-}|$out|$*" >>"$NTUI_STUB_OUT"
