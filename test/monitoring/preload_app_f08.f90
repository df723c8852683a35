! Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
!
! preload_app.f90 with "use mpi_f08" (whose MPI_Init/MPI_Finalize are
! other entry points), for libob1x_monitoring_prof.so (preload_ring.sh).
program preload_app_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, laps, nbytes, lap, right, left
  character(len=32) :: arg
  character, allocatable :: token(:)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call get_command_argument(1, arg)
  read (arg, *) laps
  call get_command_argument(2, arg)
  read (arg, *) nbytes
  allocate (token(nbytes))
  token = 'x'
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  do lap = 1, laps
    if (rank /= 0) call MPI_Recv(token, nbytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Send(token, nbytes, MPI_BYTE, right, 7, MPI_COMM_WORLD)
    if (rank == 0) call MPI_Recv(token, nbytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end do
  deallocate (token)
  call MPI_Finalize()
end program preload_app_f08
