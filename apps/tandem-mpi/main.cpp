// tandem-mpi: a video's segments spread over the ranks of an MPI job. Rank 0 cuts the input at
// its key frames, hands the segments out as ranks ask (dispatch.hpp), and joins the parts; every
// rank, rank 0 too, filters segments with its own devices, as `tandem --segment K/N` would.
//
//   mpirun --bind-to none -n 4 tandem-mpi -i in.mp4 -o out.mp4 -f "tonemap,saturation=1.2"
#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "dispatch.hpp"
#include "options.hpp"
#include "run.hpp"
#include "tandem/video_join.hpp"
#include "tandem/video_segments.hpp"

namespace fs = std::filesystem;
using tandem::cli::RunOptions;

namespace {

struct MpiOptions {
  int segments = 0;  // 0: four per rank
  std::string parts_dir;
  double rank_timeout = 60;
};

// Everything rank 0 found that the others need: whether to go on (or the error), the key
// frames, the segments and the parts directory.
struct Plan {
  std::string error;
  tandem::KeyFrameIndex index;
  int segments = 0;
  std::string parts_dir;
  double index_ms = 0;  // rank 0's scan of the key frames
};

void broadcast(std::string& text) {
  long n = static_cast<long>(text.size());
  MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  text.resize(static_cast<std::size_t>(n));
  MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
}

void broadcast(std::vector<std::int64_t>& values) {
  long n = static_cast<long>(values.size());
  MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  values.resize(static_cast<std::size_t>(n));
  MPI_Bcast(values.data(), static_cast<int>(n), MPI_INT64_T, 0, MPI_COMM_WORLD);
}

void broadcast(Plan& plan) {
  broadcast(plan.error);
  if (!plan.error.empty()) return;
  int numbers[3] = {plan.index.time_base.num, plan.index.time_base.den, plan.segments};
  MPI_Bcast(numbers, 3, MPI_INT, 0, MPI_COMM_WORLD);
  plan.index.time_base = {numbers[0], numbers[1]};
  plan.segments = numbers[2];
  broadcast(plan.index.frame_pts);
  broadcast(plan.index.key_frames);
  broadcast(plan.parts_dir);
}

// Rank 0: checks the run and cuts the video.
Plan make_plan(const RunOptions& o, const MpiOptions& m, int ranks) {
  Plan plan;
  try {
    if (o.input.empty() || o.output.empty() || o.graph.empty()) {
      throw tandem::Error("-i INPUT, -o OUTPUT and -f GRAPH are all needed (see --help)");
    }
    if (!o.segment.empty() || o.start > 0 || o.duration > 0 || o.frames > 0) {
      throw tandem::Error("tandem-mpi processes the whole video: it takes no --segment, --start, "
                          "--duration or --frames");
    }
    if (o.input == "-" || o.output == "-") {
      throw tandem::Error("tandem-mpi reads and writes files, not standard input or output");
    }
    if (!tandem::is_video_path(o.output) || tandem::is_image_path(o.output)) {
      throw tandem::Error("cannot write '" + o.output + "': tandem-mpi writes video files");
    }
    std::error_code ec;
    if (fs::exists(o.output, ec) && !o.overwrite) {
      throw tandem::Error("output '" + o.output + "' already exists (use -y to overwrite it)");
    }
    if (!o.report.empty()) tandem::AtomicFile check(o.report);  // writable, before any work
    tandem::Graph::parse(o.graph).validate(tandem::PixelFormat::rgba8);
    const auto scan = std::chrono::steady_clock::now();
    plan.index = tandem::index_key_frames(o.input);
    plan.index_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              scan).count();
    const int starts = static_cast<int>(plan.index.key_frames.size());
    plan.segments = m.segments > 0 ? m.segments : 4 * ranks;
    if (m.segments <= 0) plan.segments = std::max(1, std::min(plan.segments, starts));
    tandem::cut_segments(plan.index, plan.segments);  // throws for too many
    // Parts: in the shared directory given, else beside the output (sent there by the ranks).
    const fs::path out(o.output);
    const fs::path base = !m.parts_dir.empty() ? fs::path(m.parts_dir)
                          : out.has_parent_path() ? out.parent_path()
                                                  : fs::path(".");
    const fs::path dir = base / ("." + out.filename().string() + ".tandem-mpi-" +
                                 std::to_string(::getpid()));
    fs::create_directories(dir, ec);
    if (ec) throw tandem::Error("cannot make the parts' directory '" + dir.string() + "': " +
                                ec.message());
    plan.parts_dir = dir.string();
  } catch (const std::exception& e) {
    plan.error = e.what();
    if (plan.error.empty()) plan.error = "failed";
  }
  return plan;
}

// Filters one segment into a part; never throws.
tandem::mpi::Outcome process(const RunOptions& o, const Plan& plan,
                             const std::vector<tandem::VideoSegment>& segments,
                             const tandem::mpi::Assignment& a, const fs::path& part,
                             const std::function<void(std::int64_t)>& on_frames) {
  tandem::mpi::Outcome outcome{a.segment, a.attempt};
  outcome.part = part;
  const auto start = std::chrono::steady_clock::now();
  try {
    RunOptions one = o;
    one.output = part.string();
    one.overwrite = true;
    one.report.clear();
    one.progress = "none";
    tandem::cli::SegmentRun run{&plan.index, segments[a.segment], on_frames};
    const int code = tandem::cli::run_video(one, nullptr, &run);
    outcome.ok = code == 0;
    if (!outcome.ok) outcome.error = "stopped (exit code " + std::to_string(code) + ")";
  } catch (const std::exception& e) {
    outcome.error = e.what();
  }
  outcome.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

// A test's way to lose a rank mid-run: TANDEM_MPI_TEST_KILL_RANK=R kills rank R (SIGKILL, as
// the out-of-memory killer or a failed node would) once it has written the first frame of its
// first segment.
bool killed_here(int rank) {
  const char* r = std::getenv("TANDEM_MPI_TEST_KILL_RANK");
  return r && std::atoi(r) == rank && rank != 0;
}

class Progress {
 public:
  Progress(const std::string& mode, std::int64_t total, int segments, int ranks)
      : json_(mode == "json"),
        bar_(mode == "auto" && ::isatty(STDERR_FILENO)),
        total_(total),
        segments_(segments),
        ranks_(ranks) {}

  void update(std::int64_t frames, int done, bool last = false) {
    if (!json_ && !bar_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!last && now - shown_ < std::chrono::milliseconds(json_ ? 500 : 200)) return;
    shown_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double fps = seconds > 0 ? frames / seconds : 0;
    const double eta = fps > 0 ? (total_ - frames) / fps : -1;
    if (json_) {
      std::fprintf(stderr,
                   "{\"frame\":%lld,\"total\":%lld,\"fps\":%.2f,\"eta_s\":%.1f,"
                   "\"segments_done\":%d,\"segments\":%d,\"ranks\":%d}\n",
                   static_cast<long long>(frames), static_cast<long long>(total_), fps, eta, done,
                   segments_, ranks_);
      return;
    }
    const int width = 24;
    const int filled = static_cast<int>(width * std::min(1.0, double(frames) / total_));
    std::fprintf(stderr, "\r[%.*s%*s] %lld/%lld  %.1f fps  ETA %.0f s  segments %d/%d on %d ranks\033[K%s",
                 filled, "########################", width - filled, "",
                 static_cast<long long>(frames), static_cast<long long>(total_), fps,
                 std::max(eta, 0.0), done, segments_, ranks_, last ? "\n" : "");
  }

 private:
  bool json_, bar_;
  std::int64_t total_;
  int segments_, ranks_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point shown_{};
};

// mpirun binds each rank to one core (or socket) by default; tandem's devices and encoder want
// the machine. Says so when rank 0 is bound to fewer cores than the machine has.
void warn_about_binding() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (CPU_COUNT(&set) >= online) return;
  std::fprintf(stderr,
               "tandem-mpi: warning: rank 0 may use %d of this machine's %ld cores (mpirun binds "
               "ranks by default); give mpirun --bind-to none, and one rank per machine "
               "(--map-by ppr:1:node), to let each rank's devices use them all\n",
               CPU_COUNT(&set), online);
}

int rank_zero(const RunOptions& o, const MpiOptions& m, Plan& plan, int ranks,
              const std::vector<tandem::VideoSegment>& segments, bool& peers_lost) {
  const auto start = std::chrono::steady_clock::now();
  warn_about_binding();
  tandem::mpi::DispatchOptions d;
  d.ranks = ranks;
  for (const auto& s : segments) d.frames.push_back(s.frames);
  d.parts_dir = plan.parts_dir;
  d.part_extension = fs::path(o.output).extension().string();
  d.parts_shared = !m.parts_dir.empty();
  d.rank_timeout_s = m.rank_timeout;
  Progress progress(o.progress, static_cast<std::int64_t>(plan.index.frame_pts.size()),
                    plan.segments, ranks);
  d.say = [&](const std::string& line) {
    std::fprintf(stderr, "%standem-mpi: %s\n", ::isatty(STDERR_FILENO) ? "\r\033[K" : "",
                 line.c_str());
  };
  d.on_progress = [&](std::int64_t frames, int done) { progress.update(frames, done); };
  // From the dispatcher's thread on a signal, and from this one.
  auto remove_parts = [&] {
    std::error_code ec;
    fs::remove_all(plan.parts_dir, ec);
  };
  d.stop = &tandem::cli::g_interrupted;
  d.on_stop = remove_parts;
  std::string error;
  tandem::mpi::Dispatcher dispatcher(d);
  while (!tandem::cli::g_interrupted) {
    const tandem::mpi::Assignment a = dispatcher.next();
    if (a.segment < 0) break;
    const fs::path part =
        tandem::mpi::part_path(plan.parts_dir, a.segment, a.attempt, 0, d.part_extension);
    const tandem::mpi::Outcome outcome = process(
        o, plan, segments, a, part, [&](std::int64_t frames) { dispatcher.progress(a.segment, frames); });
    if (tandem::cli::g_interrupted) break;
    dispatcher.finished(outcome);
  }
  error = dispatcher.wait(tandem::cli::g_interrupted);
  peers_lost = !dispatcher.lost_ranks().empty();
  if (tandem::cli::g_interrupted) {
    remove_parts();
    std::fprintf(stderr, "\ntandem-mpi: interrupted by %s; nothing was left at the output\n",
                 tandem::cli::StopOnSignals::name().c_str());
    return tandem::cli::StopOnSignals::exit_code();
  }
  if (!error.empty()) {
    remove_parts();
    throw tandem::Error(error);
  }
  progress.update(static_cast<std::int64_t>(plan.index.frame_pts.size()), plan.segments, true);
  tandem::JoinOptions join;
  if (!o.no_copy) join.streams_from = o.input;
  join.no_audio = o.no_audio || o.audio == "none";
  join.no_subtitles = o.no_subtitles;
  join.no_data = o.no_data;
  join.stop = &tandem::cli::g_interrupted;
  const std::vector<fs::path> parts = dispatcher.parts();
  tandem::JoinStats joined;
  const auto join_start = std::chrono::steady_clock::now();
  try {
    joined = tandem::join_segments(parts, o.output, join);
  } catch (...) {
    remove_parts();
    throw;
  }
  const double join_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - join_start)
          .count();
  remove_parts();
  if (joined.stopped) {
    std::fprintf(stderr, "tandem-mpi: interrupted by %s; nothing was left at the output\n",
                 tandem::cli::StopOnSignals::name().c_str());
    return tandem::cli::StopOnSignals::exit_code();
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<int> per_rank(ranks, 0);
  for (const auto& r : dispatcher.records()) ++per_rank[r.rank];
  std::string shares;
  for (int r = 0; r < ranks; ++r) {
    shares += (r ? ", " : "") + std::to_string(r) + ": " + std::to_string(per_rank[r]);
  }
  std::fprintf(stderr,
               "tandem-mpi: wrote %s (%lld frames, %d segments on %d ranks) in %.2f s; segments "
               "per rank %s\n",
               o.output.c_str(), static_cast<long long>(joined.frames), plan.segments, ranks, wall,
               shares.c_str());
  if (dispatcher.redone() > 0 || !dispatcher.lost_ranks().empty()) {
    std::string lost;
    for (int r : dispatcher.lost_ranks()) lost += (lost.empty() ? "" : ", ") + std::to_string(r);
    std::fprintf(stderr, "tandem-mpi: %d segment%s redone on other ranks%s\n", dispatcher.redone(),
                 dispatcher.redone() == 1 ? "" : "s",
                 lost.empty() ? "" : (" (ranks lost: " + lost + ")").c_str());
  }
  if (!o.report.empty()) {
    nlohmann::ordered_json j = {{"input", o.input},   {"output", o.output},
                                {"graph", o.graph},   {"ranks", ranks},
                                {"wall_ms", wall * 1e3}, {"frames", joined.frames},
                                {"redone", dispatcher.redone()},
                                {"index_ms", plan.index_ms}, {"join_ms", join_ms}};
    j["ranks_lost"] = std::vector<int>(dispatcher.lost_ranks().begin(),
                                       dispatcher.lost_ranks().end());
    for (std::size_t s = 0; s < segments.size(); ++s) {
      const auto& r = dispatcher.records()[s];
      j["segments"].push_back({{"index", s},
                               {"first_frame", segments[s].first_frame},
                               {"frames", r.frames},
                               {"rank", r.rank},
                               {"attempts", r.attempts},
                               {"seconds", r.seconds}});
    }
    tandem::AtomicFile report(o.report);
    tandem::cli::finish_report(report, j, o.output);
  }
  return 0;
}

int other_rank(const RunOptions& o, const MpiOptions& m, const Plan& plan, int rank,
               const std::vector<tandem::VideoSegment>& segments, bool& peers_lost) {
  const bool shared = !m.parts_dir.empty();
  // Not shared: the rank's own temporary directory, each part sent to rank 0 once written.
  fs::path dir = plan.parts_dir;
  std::error_code ec;
  if (!shared) {
    dir = fs::temp_directory_path(ec) / ("tandem-mpi-" + std::to_string(::getpid()));
    fs::create_directories(dir, ec);
  }
  const std::string extension = fs::path(o.output).extension().string();
  bool first = true;
  {
    tandem::mpi::Courier courier(rank);
    struct Finally {
      tandem::mpi::Courier& courier;
      bool& lost;
      ~Finally() { lost = courier.peers_lost(); }
    } finally{courier, peers_lost};
    while (true) {
      const tandem::mpi::Assignment a = courier.next();
      if (a.segment < 0) break;
      const fs::path part = tandem::mpi::part_path(dir, a.segment, a.attempt, rank, extension);
      const tandem::mpi::Outcome outcome =
          process(o, plan, segments, a, part, [&](std::int64_t frames) {
            if (first && killed_here(rank)) std::raise(SIGKILL);
            courier.progress(a.segment, a.attempt, frames);
          });
      if (tandem::cli::g_interrupted) break;  // the courier says bye as it goes
      courier.finished(outcome, shared);
      first = false;
    }
  }
  if (!shared) fs::remove_all(dir, ec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // A rank that dies is noticed by its silence (mpirun --enable-recovery lets the others go on).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  CLI::App app{
      "tandem-mpi: runs a filter graph on a video across the ranks of an MPI job. Rank 0 cuts "
      "the video at its key frames into more segments than ranks and hands them out as ranks "
      "ask, so a faster machine takes more; each rank filters its segments with its own "
      "devices; rank 0 joins the parts, with the input's audio and other streams, into the "
      "output.\n\n"
      "  mpirun --bind-to none -n 4 tandem-mpi -i in.mp4 -o out.mp4 -f \"gaussian=sigma=2\"\n"
      "  mpirun --bind-to none --map-by ppr:1:node --enable-recovery --hostfile hosts \\\n"
      "      tandem-mpi -i /shared/in.mp4 -o /shared/out.mkv -f GRAPH --parts-dir /shared/tmp\n\n"
      "--bind-to none lets each rank use all of its machine's cores (mpirun binds a rank to one "
      "by default). With --enable-recovery, the segments of a rank that dies are redone by the "
      "others.",
      "tandem-mpi"};
  app.set_version_flag("--version", tandem::version());
  RunOptions o;
  MpiOptions m;
  tandem::cli::add_run_options(app, o);
  auto* mpi = "MPI";
  app.add_option("--segments", m.segments,
                 "Segments to cut the video into (default: four per rank, as many as its key "
                 "frames allow)")
      ->group(mpi);
  app.add_option("--parts-dir", m.parts_dir,
                 "A directory every rank can write and rank 0 read (a shared file system): the "
                 "ranks write their parts there. Default: each rank writes into its own "
                 "temporary directory and sends the part to rank 0")
      ->group(mpi);
  app.add_option("--rank-timeout", m.rank_timeout,
                 "Seconds without word from a rank (it reports every second) after which its "
                 "segment goes to another rank")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->group(mpi);
  try {
    tandem::cli::check_dashes(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = 2;
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      code = rank == 0 ? app.exit(e) : 0;
    } else if (rank == 0) {
      std::fprintf(stderr, "tandem-mpi: error: %s (see tandem-mpi --help)\n", e.what());
    }
    MPI_Finalize();
    return code;
  }

  int code = 0;
  bool peers_lost = false;
  try {
    const tandem::cli::StopOnSignals stop;
    Plan plan;
    if (rank == 0) plan = make_plan(o, m, ranks);
    broadcast(plan);
    if (!plan.error.empty()) {
      if (rank == 0) std::fprintf(stderr, "tandem-mpi: error: %s\n", plan.error.c_str());
      MPI_Finalize();
      return 1;
    }
    const std::vector<tandem::VideoSegment> segments =
        tandem::cut_segments(plan.index, plan.segments);
    code = rank == 0 ? rank_zero(o, m, plan, ranks, segments, peers_lost)
                     : other_rank(o, m, plan, rank, segments, peers_lost);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-mpi: error%s: %s\n",
                 rank == 0 ? "" : (" on rank " + std::to_string(rank)).c_str(), e.what());
    code = 1;
  }
  if (peers_lost) {
    // MPI_Finalize waits for every rank, the lost one too (Open MPI 4.1): leave without it.
    std::fflush(nullptr);
    std::_Exit(code);
  }
  MPI_Finalize();
  return code;
}
