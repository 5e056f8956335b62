srun -K  --job-name=xsim \
	 --partition=A100-40GB,A100-80GB,H100 \
	 --gpus=1 \
	 --cpus-per-task=12 \
	 --mem=160G \
	 --output logs/console.%A_%a.out \
	 --error logs/console.%A_%a.error  \
         --container-image=/netscratch/images/nvcr.io_nvidia_pytorch_24.01-py3.sqsh \
         --container-workdir=`pwd` \
         --container-mounts=/netscratch:/netscratch,/ds:/ds,`pwd`:`pwd` \
         --export="NCCL_SOCKET_IFNAME=bond,NCCL_IB_HCA=mlx5" \
          setup_env.sh python pretrain_crossmodal.py "$@" &
