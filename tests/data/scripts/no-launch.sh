#!/bin/bash
#SBATCH -N 1
#SBATCH -t 10
echo "just checking the queue"
hostname
