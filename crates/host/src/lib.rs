//! What qpslab does to the machine below the server; it knows nothing of studies or servers'
//! SQL, and the lab's study runner uses it for a setup's machine state and fileio cells.
//!
//! - [`os`] applies OS-level toggles (transparent huge pages) reversibly;
//! - [`storage`] puts a setup's datadir on a filesystem of its own (loop image or scratch
//!   device, mount options, I/O scheduler, read-ahead) and undoes it, also after a `kill -9`
//!   ([`storage::clean_stale`]);
//! - [`io`] runs sysbench's fileio workloads through fio (`qpslab io`, fileio study cells) and
//!   stores each interval as fio reports it ([`io::stored`]).
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): what qpslab does
//! to the machine below the server: reversible OS toggles (`os.rs`), a setup's storage
//! (`storage/`: loop images or scratch devices, filesystems, mounts, I/O scheduler and read-ahead,
//! undone on drop, signals and after `kill -9`), fileio through fio (`io/`: the job, files, the
//! child process, its reports read into a phase, stored interval by interval as `FioMeasured`).
//!
//! ```no_run
//! let thp = qpslab_host::os::thp_support();
//! println!("transparent huge pages: {thp:?}");
//! ```

pub mod io;
pub mod os;
pub mod storage;
