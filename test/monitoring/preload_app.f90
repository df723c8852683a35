! Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
!
! preload_app.c in Fortran (mpif.h): every rank sends LAPS messages of
! BYTES bytes to its right neighbour, for the Fortran MPI_INIT and
! MPI_FINALIZE of libob1x_monitoring_prof.so (preload_ring.sh, preload_missing.sh).
program preload_app
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, laps, nbytes, lap, right, left
  integer :: status(MPI_STATUS_SIZE)
  character(len=32) :: arg
  character, allocatable :: token(:)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, arg)
  read (arg, *) laps
  call get_command_argument(2, arg)
  read (arg, *) nbytes
  allocate (token(nbytes))
  token = 'x'
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  do lap = 1, laps
    if (rank /= 0) call MPI_RECV(token, nbytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, status, ierr)
    call MPI_SEND(token, nbytes, MPI_BYTE, right, 7, MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_RECV(token, nbytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, status, ierr)
  end do
  deallocate (token)
  call MPI_FINALIZE(ierr)
end program preload_app
