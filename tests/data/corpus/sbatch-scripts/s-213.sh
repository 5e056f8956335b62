srun -K --job-name=xsim-pre \
	--gpus=1 \
	--partition=L40S,A100-SXM4,H100-PCIe,V100-32GB \
	--mem=160G --cpus-per-task=12 \
	  --container-image=/fscratch/containers/pytorch_24.03-py3.sqsh \
	  --container-mounts=/fscratch:/fscratch,/datasets:/datasets,`pwd`:`pwd` \
	  --container-workdir=`pwd` \
    --export="NCCL_SOCKET_IFNAME=ens1f0,NCCL_IB_HCA=mlx5_0,NCCL_DEBUG=WARN" \
    --output runs/xsim-%j.log  --error runs/xsim-%j.err \
       setup_env.sh python pretrain_crossmodal.py "$@" &
