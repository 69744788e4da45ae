// tandem-mpi's segments handed out over MPI (dispatch.hpp).
//
// Messages: control messages of five integers {type, segment, attempt, value, microseconds}
// (tag kControl); a failure's text follows its control message (kText); a part's bytes follow
// its "done" in chunks (kData) unless the parts directory is shared. Rank 0 hears from every
// rank at least once a second (a heartbeat), so a rank silent for rank_timeout_s is taken for
// lost and its segment handed to another.
#include "dispatch.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>

#include "run.hpp"

namespace fs = std::filesystem;

namespace tandem::mpi {
namespace {

constexpr int kControl = 1, kText = 2, kData = 3;
enum Type : std::int64_t { kAsk = 1, kHeartbeat, kProgress, kDone, kFailed, kBye, kAssign, kStop };
using Message = std::array<std::int64_t, 5>;
constexpr std::size_t kChunk = 16 << 20;
constexpr auto kPoll = std::chrono::milliseconds(2);

void send(int to, const Message& m) {
  MPI_Send(m.data(), 5, MPI_INT64_T, to, kControl, MPI_COMM_WORLD);
}

// Waits for a receive posted as `request` for at most `seconds`; false (cancelled) on silence.
bool completes(MPI_Request& request, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (std::chrono::steady_clock::now() > until) {
      MPI_Cancel(&request);
      MPI_Request_free(&request);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

std::int64_t micros(double seconds) { return static_cast<std::int64_t>(seconds * 1e6); }

}  // namespace

fs::path part_path(const fs::path& dir, int segment, int attempt, int rank,
                   const std::string& extension) {
  char name[64];
  std::snprintf(name, sizeof name, "part-%05d-%d-r%d", segment, attempt, rank);
  return dir / (name + extension);
}

// ---- rank 0 ----

Dispatcher::Dispatcher(DispatchOptions options) : options_(std::move(options)) {
  const std::size_t n = options_.frames.size();
  records_.resize(n);
  parts_.resize(n);
  attempts_.assign(n, 0);
  failures_.assign(n, 0);
  for (std::size_t s = 0; s < n; ++s) queue_.push_back(static_cast<int>(s));
  heard_.assign(options_.ranks, Clock::now());
  thread_ = std::thread([this] { run(); });
}

Dispatcher::~Dispatcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

bool Dispatcher::all_done() const {
  return std::all_of(records_.begin(), records_.end(),
                     [](const SegmentRecord& r) { return r.done; });
}

Assignment Dispatcher::next() {
  std::unique_lock lock(mutex_);
  local_waiting_ = true;
  hand_out(false);
  changed_.wait(lock, [&] { return local_ || finishing(); });
  local_waiting_ = false;
  if (!local_) return {};
  const Assignment a = *local_;
  local_.reset();
  return a;
}

void Dispatcher::progress(int segment, std::int64_t frames) {
  std::lock_guard lock(mutex_);
  running_frames_[segment] = frames;
}

void Dispatcher::finished(const Outcome& outcome) {
  std::lock_guard lock(mutex_);
  complete(0, outcome);
}

std::string Dispatcher::wait(const std::atomic<bool>& stop) {
  std::unique_lock lock(mutex_);
  while (!stopped_) {
    if (stop) stopping_ = true;
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
  return error_;
}

void Dispatcher::run() {
  while (true) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kControl, MPI_COMM_WORLD, &flag, &status);
    if (flag) {
      Message m;
      MPI_Recv(m.data(), 5, MPI_INT64_T, status.MPI_SOURCE, kControl, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      handle(status.MPI_SOURCE, m.data());
      continue;
    }
    std::unique_lock lock(mutex_);
    if (options_.stop && options_.stop->load() && !stopping_) {
      stopping_ = true;
      if (options_.on_stop) options_.on_stop();
      changed_.notify_all();
    }
    check_timeouts();
    if (finishing()) {
      // Every rank is told to stop, once, those taken for lost too (one that was only slow
      // would wait for a segment forever); the run ends when each said bye or is lost.
      for (int r = 1; r < options_.ranks; ++r) {
        if (told_.count(r) || gone_.count(r)) continue;
        told_.insert(r);
        send(r, {kStop, 0, 0, lost_.empty() ? 0 : 1, 0});
      }
      bool everyone = true;
      for (int r = 1; r < options_.ranks; ++r) everyone &= gone_.count(r) || lost_.count(r);
      if (everyone) {
        stopped_ = true;
        changed_.notify_all();
        return;
      }
    } else {
      hand_out(true);
    }
    report_progress();
    lock.unlock();
    std::this_thread::sleep_for(kPoll);
  }
}

void Dispatcher::handle(int source, const std::int64_t* m) {
  {
    std::lock_guard lock(mutex_);
    heard_[source] = Clock::now();
    if (lost_.erase(source)) {
      if (options_.say) options_.say("rank " + std::to_string(source) + " is heard from again");
    }
  }
  const int segment = static_cast<int>(m[1]);
  Outcome outcome{segment, static_cast<int>(m[2])};
  outcome.seconds = m[4] / 1e6;
  switch (m[0]) {
    case kAsk: {
      std::lock_guard lock(mutex_);
      running_.erase(source);
      idle_.insert(source);
      return;
    }
    case kProgress: {
      std::lock_guard lock(mutex_);
      auto it = running_.find(source);
      if (it != running_.end() && it->second.segment == segment) {
        running_frames_[segment] = m[3];
      }
      return;
    }
    case kDone: {
      outcome.part = part_path(options_.parts_dir, segment, outcome.attempt, source,
                               options_.part_extension);
      // The bytes come first, outside the lock: nothing else reads the parts' messages.
      outcome.ok = m[3] < 0 || receive_part(source, m[3], outcome.part);
      if (!outcome.ok) outcome.error = "its part did not arrive";
      std::lock_guard lock(mutex_);
      complete(source, outcome);
      return;
    }
    case kFailed: {
      std::string text(static_cast<std::size_t>(std::max<std::int64_t>(m[3], 0)), '\0');
      MPI_Request request;
      MPI_Irecv(text.data(), static_cast<int>(text.size()), MPI_CHAR, source, kText,
                MPI_COMM_WORLD, &request);
      outcome.error = completes(request, options_.rank_timeout_s) ? text : "(no reason arrived)";
      std::lock_guard lock(mutex_);
      complete(source, outcome);
      return;
    }
    case kBye: {  // told to stop, or leaving (interrupted): what it ran goes to another
      std::lock_guard lock(mutex_);
      gone_.insert(source);
      idle_.erase(source);
      if (auto it = running_.find(source); it != running_.end()) {
        requeue(it->second.segment);
        running_frames_.erase(it->second.segment);
        running_.erase(it);
      }
      return;
    }
    default:  // a heartbeat
      return;
  }
}

bool Dispatcher::receive_part(int source, std::int64_t bytes, const fs::path& to) {
  std::ofstream file(to, std::ios::binary | std::ios::trunc);
  std::vector<char> chunk(std::min<std::int64_t>(bytes, kChunk));
  for (std::int64_t left = bytes; left > 0;) {
    const int n = static_cast<int>(std::min<std::int64_t>(left, kChunk));
    MPI_Request request;
    MPI_Irecv(chunk.data(), n, MPI_CHAR, source, kData, MPI_COMM_WORLD, &request);
    if (!completes(request, options_.rank_timeout_s)) return false;
    file.write(chunk.data(), n);
    left -= n;
  }
  file.close();
  return static_cast<bool>(file);
}

void Dispatcher::check_timeouts() {
  const auto now = Clock::now();
  for (int r = 1; r < options_.ranks; ++r) {
    if (lost_.count(r) || gone_.count(r)) continue;
    const double silent = std::chrono::duration<double>(now - heard_[r]).count();
    if (silent < options_.rank_timeout_s) continue;
    lost_.insert(r);
    idle_.erase(r);
    std::string line = "rank " + std::to_string(r) + " was not heard from for " +
                       std::to_string(static_cast<int>(silent)) + " s and is taken for lost";
    if (auto it = running_.find(r); it != running_.end()) {
      line += "; its segment " + std::to_string(it->second.segment) + " goes to another rank";
      requeue(it->second.segment);
      running_frames_.erase(it->second.segment);
      running_.erase(it);
    }
    if (options_.say) options_.say(line);
  }
}

void Dispatcher::requeue(int segment) {
  if (records_[segment].done) return;
  if (std::find(queue_.begin(), queue_.end(), segment) != queue_.end()) return;
  queue_.push_front(segment);
  ++redone_;
}

void Dispatcher::hand_out(bool remote) {
  while (!queue_.empty() && !finishing()) {
    const int segment = queue_.front();
    if (records_[segment].done) {
      queue_.pop_front();
      continue;
    }
    int rank = -1;
    if (local_waiting_ && !local_) {
      rank = 0;
    } else if (remote && !idle_.empty()) {
      rank = *idle_.begin();
      idle_.erase(idle_.begin());
    } else {
      return;
    }
    queue_.pop_front();
    const Assignment a{segment, ++attempts_[segment]};
    running_[rank] = a;
    running_frames_[segment] = 0;
    if (rank == 0) {
      local_ = a;
      changed_.notify_all();
    } else {
      send(rank, {kAssign, a.segment, a.attempt, 0, 0});
    }
  }
}

void Dispatcher::complete(int rank, const Outcome& outcome) {
  const int s = outcome.segment;
  if (auto it = running_.find(rank); it != running_.end() && it->second.segment == s) {
    running_.erase(it);
  }
  if (s < 0 || s >= static_cast<int>(records_.size())) return;
  const bool elsewhere = std::any_of(running_.begin(), running_.end(),
                                     [&](const auto& r) { return r.second.segment == s; });
  if (!elsewhere) running_frames_.erase(s);
  std::error_code ec;
  if (outcome.ok) {
    if (records_[s].done) {  // done twice (a rank taken for lost that was only slow)
      fs::remove(outcome.part, ec);
    } else {
      records_[s] = {rank, attempts_[s], options_.frames[s], outcome.seconds, true};
      parts_[s] = outcome.part;
    }
  } else if (!records_[s].done && !stopping_) {
    fs::remove(outcome.part, ec);
    const std::string line = "segment " + std::to_string(s) + " failed on rank " +
                             std::to_string(rank) + ": " + outcome.error;
    if (++failures_[s] >= options_.max_failures) {
      error_ = line + " (failed " + std::to_string(failures_[s]) + " times)";
    } else {
      if (options_.say) options_.say(line + "; it goes to another rank");
      requeue(s);
    }
  }
  changed_.notify_all();
}

void Dispatcher::report_progress() {
  const auto now = Clock::now();
  if (!options_.on_progress || now - shown_ < std::chrono::milliseconds(200)) return;
  shown_ = now;
  std::int64_t frames = 0;
  int done = 0;
  for (std::size_t s = 0; s < records_.size(); ++s) {
    if (records_[s].done) {
      frames += records_[s].frames;
      ++done;
    }
  }
  for (const auto& [s, f] : running_frames_) {
    if (!records_[s].done) frames += f;
  }
  options_.on_progress(frames, done);
}

// ---- every other rank ----

Courier::Courier(int rank) : rank_(rank), thread_([this] { run(); }) {}

Courier::~Courier() {
  {
    // Leaving untold (interrupted): rank 0 hears it, and hands what this rank ran to another.
    std::lock_guard lock(mutex_);
    if (!quit_) outbox_.push_back({kBye, 0, 0, 0, 0});
    quit_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

Assignment Courier::next() {
  std::unique_lock lock(mutex_);
  if (!asked_ && !quit_) {
    outbox_.push_back({kAsk, 0, 0, 0, 0});
    asked_ = true;
  }
  changed_.wait(lock, [&] { return inbox_ || quit_; });
  if (!inbox_) return {};
  const Assignment a = *inbox_;
  inbox_.reset();
  asked_ = false;
  running_ = true;
  return a;
}

void Courier::progress(int segment, int attempt, std::int64_t frames) {
  std::lock_guard lock(mutex_);
  outbox_.push_back({kProgress, segment, attempt, frames, 0});
}

void Courier::finished(const Outcome& outcome, bool shared) {
  std::lock_guard lock(mutex_);
  running_ = false;
  outcomes_.emplace_back(outcome, shared);
}

void Courier::run() {
  auto beat = std::chrono::steady_clock::now();
  std::vector<char> chunk;
  while (true) {
    std::deque<Message> out;
    std::deque<std::pair<Outcome, bool>> outcomes;
    {
      std::lock_guard lock(mutex_);
      for (auto& m : outbox_) out.push_back({m[0], m[1], m[2], m[3], m[4]});
      outbox_.clear();
      outcomes.swap(outcomes_);
      if (quit_ && out.empty() && outcomes.empty()) return;  // told to stop, bye said
    }
    for (const Message& m : out) send(0, m);
    for (auto& [o, shared] : outcomes) {
      std::error_code ec;
      if (o.ok) {
        const auto bytes = static_cast<std::int64_t>(fs::file_size(o.part, ec));
        send(0, {kDone, o.segment, o.attempt, shared ? -1 : bytes, micros(o.seconds)});
        if (shared) continue;
        std::ifstream file(o.part, std::ios::binary);
        chunk.resize(std::min<std::size_t>(kChunk, static_cast<std::size_t>(bytes)));
        for (std::int64_t left = bytes; left > 0;) {
          const auto n = static_cast<std::streamsize>(std::min<std::int64_t>(left, kChunk));
          file.read(chunk.data(), n);
          MPI_Send(chunk.data(), static_cast<int>(n), MPI_CHAR, 0, kData, MPI_COMM_WORLD);
          left -= n;
        }
        fs::remove(o.part, ec);
      } else {
        send(0, {kFailed, o.segment, o.attempt, static_cast<std::int64_t>(o.error.size()),
                 micros(o.seconds)});
        MPI_Send(o.error.data(), static_cast<int>(o.error.size()), MPI_CHAR, 0, kText,
                 MPI_COMM_WORLD);
        fs::remove(o.part, ec);
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - beat > std::chrono::seconds(1)) {
      send(0, {kHeartbeat, 0, 0, 0, 0});
      beat = now;
    }
    int flag = 0;
    MPI_Iprobe(0, kControl, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    if (flag) {
      Message m;
      MPI_Recv(m.data(), 5, MPI_INT64_T, 0, kControl, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::lock_guard lock(mutex_);
      if (m[0] == kAssign) {
        inbox_ = Assignment{static_cast<int>(m[1]), static_cast<int>(m[2])};
      } else if (m[0] == kStop) {
        // A segment under way stops where it is; what is still to send is sent, then bye.
        if (running_) tandem::cli::g_interrupted = true;
        quit_ = true;
        peers_lost_ = m[3] != 0;
        outbox_.push_back({kBye, 0, 0, 0, 0});
      }
      changed_.notify_all();
      continue;
    }
    std::this_thread::sleep_for(kPoll);
  }
}

}  // namespace tandem::mpi
