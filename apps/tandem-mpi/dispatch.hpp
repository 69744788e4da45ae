#pragma once
// tandem-mpi's segments handed out over MPI: rank 0's Dispatcher gives each rank that asks the
// next segment (so a faster rank takes more), hears its progress and its finished part, and gives
// the segments of a rank it stops hearing from to others; every other rank's Courier asks, reports
// and sends its parts. Each is the one thread of its process that calls MPI while it runs.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace tandem::mpi {

/// A segment to process, or none: stop.
struct Assignment {
  int segment = -1;
  int attempt = 0;
};

/// What a rank did with a segment.
struct Outcome {
  int segment = -1;
  int attempt = 0;
  bool ok = false;
  std::string error;         ///< when not ok
  std::filesystem::path part;  ///< when ok: the part written
  double seconds = 0;        ///< its processing time
};

/// One segment's record, for the summary and the report.
struct SegmentRecord {
  int rank = -1;  ///< that wrote the part kept
  int attempts = 0;
  std::int64_t frames = 0;
  double seconds = 0;
  bool done = false;
};

struct DispatchOptions {
  int ranks = 1;
  std::vector<std::int64_t> frames;  ///< per segment
  std::filesystem::path parts_dir;  ///< where rank 0 keeps the parts
  std::string part_extension;       ///< ".mkv"
  bool parts_shared = false;        ///< the ranks write into parts_dir themselves
  double rank_timeout_s = 60;       ///< silence after which a rank is taken for lost
  int max_failures = 3;             ///< of one segment before the run fails
  /// Called from the dispatcher's thread: a line worth saying (a rank lost, a segment redone),
  /// and, every few tenths of a second, the frames written so far and the segments done.
  std::function<void(const std::string& line)> say;
  std::function<void(std::int64_t frames, int segments_done)> on_progress;
  /// Set (by a signal) to stop the run; on_stop is called from the dispatcher's thread as soon
  /// as it sees it (rank 0 removes the parts then, before mpirun's SIGKILL may come).
  const std::atomic<bool>* stop = nullptr;
  std::function<void()> on_stop;
};

/// A part's name in a parts directory: segment, attempt and rank, so two ranks that do one
/// segment never write one file.
std::filesystem::path part_path(const std::filesystem::path& dir, int segment, int attempt,
                                int rank, const std::string& extension);

/// Rank 0: hands out the segments (dispatcher thread) and serves rank 0's own worker (next(),
/// progress(), finished()).
class Dispatcher {
 public:
  explicit Dispatcher(DispatchOptions options);
  ~Dispatcher();

  /// For rank 0's own worker.
  Assignment next();
  void progress(int segment, std::int64_t frames);
  void finished(const Outcome& outcome);

  /// Waits until every segment is done, the run failed, or `stop` was set; then tells every
  /// rank to stop. Returns the error that failed the run, empty when all were done.
  std::string wait(const std::atomic<bool>& stop);

  /// After wait(): each segment's record, the parts by segment, the ranks given up on and the
  /// segments redone elsewhere after a failure or a lost rank.
  const std::vector<SegmentRecord>& records() const { return records_; }
  const std::vector<std::filesystem::path>& parts() const { return parts_; }
  const std::set<int>& lost_ranks() const { return lost_; }
  int redone() const { return redone_; }

 private:
  using Clock = std::chrono::steady_clock;
  void run();
  void handle(int source, const std::int64_t* message);  // unlocked
  void check_timeouts();
  void requeue(int segment);
  void hand_out(bool remote);
  void complete(int rank, const Outcome& outcome);
  bool all_done() const;
  bool finishing() const { return all_done() || !error_.empty() || stopping_; }
  bool receive_part(int source, std::int64_t bytes, const std::filesystem::path& to);
  void report_progress();

  DispatchOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<int> queue_;
  std::vector<SegmentRecord> records_;
  std::vector<std::filesystem::path> parts_;
  std::map<int, Assignment> running_;  // by rank
  std::map<int, std::int64_t> running_frames_;  // by segment
  std::vector<int> attempts_;                   // handed out, by segment
  std::vector<Clock::time_point> heard_;
  std::set<int> idle_, lost_, told_, gone_;  // waiting; given up on; told to stop; said bye
  std::optional<Assignment> local_;  // rank 0's own, handed out and not yet taken
  bool local_waiting_ = false;
  std::vector<int> failures_;
  int redone_ = 0;
  std::string error_;
  bool stopping_ = false, stopped_ = false;
  Clock::time_point shown_{};
  std::thread thread_;
};

/// Every other rank: asks rank 0 for segments and reports (courier thread).
class Courier {
 public:
  explicit Courier(int rank);
  ~Courier();

  /// The next segment, or segment -1: stop.
  Assignment next();
  void progress(int segment, int attempt, std::int64_t frames);
  /// Sends the outcome, with the part's bytes unless `shared` (rank 0 reads it itself).
  void finished(const Outcome& outcome, bool shared);
  /// True when rank 0 said, as it told this rank to stop, that it lost a rank: MPI_Finalize
  /// would wait for that rank forever, so the process exits without it.
  bool peers_lost() {
    std::lock_guard lock(mutex_);
    return peers_lost_;
  }

 private:
  void run();

  int rank_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<std::int64_t>> outbox_;
  std::deque<std::pair<Outcome, bool>> outcomes_;
  std::optional<Assignment> inbox_;
  bool asked_ = false, running_ = false, quit_ = false, peers_lost_ = false;
  std::thread thread_;
};

}  // namespace tandem::mpi
