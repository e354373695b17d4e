#include "analyze/auto_quant.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "analyze/analysis_common.h"
#include "calib/bias_correction.h"
#include "support/json_writer.h"

namespace qairt::analyze {

using namespace detail;  // NOLINT(build/namespaces): the analysis's shared pieces

namespace {

// The techniques a candidate adds to the user's calibration.
struct Techniques {
  bool bias_correction = false, seqmse = false, adaptive_rounding = false, act_mse = false, wide_fixed = false;
};

Techniques Union(Techniques a, const Techniques& b) {
  a.bias_correction |= b.bias_correction;
  a.seqmse |= b.seqmse;
  a.adaptive_rounding |= b.adaptive_rounding;
  a.act_mse |= b.act_mse;
  a.wide_fixed |= b.wide_fixed;
  return a;
}

std::string LabelOf(const Techniques& t) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (on) s += (s.empty() ? "" : " + ") + std::string(name);
  };
  add(t.seqmse, "seqmse");
  add(t.adaptive_rounding, "adaptive rounding");
  add(t.bias_correction, "bias correction");
  add(t.act_mse, "mse activation ranges");
  add(t.wide_fixed, "16-bit fixed ranges");
  return s.empty() ? "none (the options as given)" : s;
}

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool HasOpOfType(const Graph& g, const std::vector<calib::FixedOutputRange>& ranges) {
  for (OpId id = 0; id < g.op_count(); ++id)
    for (const calib::FixedOutputRange& f : ranges)
      if (g.op(id).type == f.op_type) return true;
  return false;
}

}  // namespace

Status ChooseCalibration(const Graph& graph, const calib::SampleSource& samples, const AutoQuantOptions& options,
                         calib::Options* chosen, AutoQuantReport* report) {
  if (!chosen || !report) return InvalidArgument("auto quant: chosen and report must not be NULL");
  *report = AutoQuantReport{};
  if (samples.count == 0) return InvalidArgument("auto quant needs at least one sample");
  const auto t0 = Clock::now();
  const Options& o = options.analysis;
  const calib::Options& user = o.calibration;

  // What the user turned on stays on; a method the user chose other than the
  // default (sqnr or percentile ranges, mse weights) is not replaced.
  Techniques given;
  given.bias_correction = user.bias_correction;
  given.seqmse = user.param_method == calib::Method::kSeqMse;
  given.adaptive_rounding = user.adaptive_rounding;
  given.act_mse = user.act_method == calib::Method::kMse;
  given.wide_fixed = !user.wide_fixed_ranges.empty();
  const bool weights_free = user.param_method == calib::Method::kMinMax || given.seqmse;
  const bool acts_free = user.act_method == calib::Method::kMinMax || given.act_mse;

  auto options_of = [&](const Techniques& t) {
    calib::Options c = user;
    c.bias_correction = t.bias_correction;
    if (t.seqmse) c.param_method = calib::Method::kSeqMse;
    c.adaptive_rounding = t.adaptive_rounding;
    if (t.act_mse) c.act_method = calib::Method::kMse;
    if (t.wide_fixed && c.wide_fixed_ranges.empty()) c.wide_fixed_ranges = options.fixed_ranges;
    if (!c.realize) c.realize = o.realize;  // bias correction measures what the target runs
    c.num_threads = o.num_threads;
    return c;
  };

  // Two-fold cross-validation: calibrated on one half (calib::SplitInHalves)
  // and scored on the other, then the other way round. Every sample is held
  // out once, and a technique that fits its calibration samples (bias
  // correction, adaptive rounding) is judged only where it was not fitted.
  // The score is the worse of the two folds.
  struct Fold {
    calib::SampleSource fit, held_out;
    Prepared p;  // the float reference on held_out
  };
  std::vector<Fold> folds;
  if (samples.count >= 4) {
    const calib::Halves h = calib::SplitInHalves(samples.count);
    const calib::SampleSource a = calib::Subset(samples, h.fit), b = calib::Subset(samples, h.held_out);
    folds.resize(2);
    folds[0].fit = folds[1].held_out = a;
    folds[0].held_out = folds[1].fit = b;
    report->held_out = samples.count;
  } else {
    folds.resize(1);  // too few to split: scored where calibrated
    folds[0].fit = folds[0].held_out = samples;
  }
  report->samples = samples.count;
  report->folds = folds.size();
  if (options.progress) options.progress(0, 1, "auto quant: float reference");
  for (Fold& f : folds) QAIRT_RETURN_IF_ERROR(PrepareReference(graph, f.held_out, o, &f.p));

  // The candidates, in groups sharing one calibration: bias correction is a
  // step after the rest of calibration (calib::Calibrate does the same), so
  // a configuration and that configuration corrected cost one calibration.
  struct Group {
    Techniques base;
    bool plain, corrected;  // which of the two are candidates
  };
  std::vector<Group> groups;
  {
    Techniques w, act;
    w.seqmse = w.adaptive_rounding = weights_free;
    act.act_mse = acts_free;
    // Without bias correction, each is scored as well (it can cost: on the
    // classifier at W8A16 it loses 7 dB after adaptive rounding).
    groups = {{Techniques{}, true, true}, {w, true, true}, {act, true, false}, {Union(w, act), false, true}};
  }
  const bool wide_applies = user.act_bitwidth < 16 && !options.fixed_ranges.empty() &&
                            HasOpOfType(graph, options.fixed_ranges) && !given.wide_fixed;
  const size_t total = 6 + (wide_applies ? 1 : 0);

  auto done = [&](const std::string& label) {
    for (const AutoQuantTrial& t : report->trials)
      if (t.label == label) return true;  // the user's options already hold it
    return false;
  };
  // Held-out score of a calibrated graph on fold f: the worst output's SQNR
  // over the fold's samples, kInfeasible when the target has no kernels for
  // it. The outputs themselves, not the logits under a softmax head that
  // rank mixed precision's candidates: on the recognizer bias correction
  // gains most on the logits of the thousands of classes no line is near
  // (bias correction alone scored 1.8 dB above it with adaptive rounding
  // there, 9 dB below on the probabilities an OCR pipeline decodes).
  auto score = [&](const Graph& g, const Fold& f) -> Result<double> {
    auto sc = Score(g, f.held_out, f.p, o);
    if (!sc.ok()) return sc.status();
    return sc.value().sqnr;
  };
  std::vector<Techniques> tried;  // per trial
  // A configuration's score is its worse fold: one that gains on one half
  // of the samples and loses on the other is a guess, not a gain (on the
  // classifier's 24 lines, single folds of one configuration differ by up to
  // 20 dB, where a few lines near its decision boundary set the SQNR). A
  // fold the target has no kernels for (kInfeasible) makes it infeasible.
  auto add = [&](AutoQuantTrial* t, double db) {
    t->sqnr_db = t->fold_db.empty() ? db : std::min(t->sqnr_db, db);
    t->fold_db.push_back(db);
  };
  auto run_group = [&](const Group& grp) -> Status {
    Techniques plain = Union(grp.base, given), corrected = plain;
    plain.bias_correction = false;
    corrected.bias_correction = true;
    const bool want_plain = grp.plain && !given.bias_correction && !done(LabelOf(plain));
    const bool want_corrected = (grp.corrected || given.bias_correction) && !done(LabelOf(corrected));
    if (!want_plain && !want_corrected) return Status::Ok();
    if (options.progress) options.progress(report->trials.size(), total, "auto quant");
    AutoQuantTrial p_trial, c_trial;
    p_trial.label = LabelOf(plain);
    p_trial.options = options_of(plain);
    c_trial.label = LabelOf(corrected);
    c_trial.options = options_of(corrected);
    for (const Fold& f : folds) {
      auto c0 = Clock::now();
      Graph g = graph;
      calib::Report rep;
      QAIRT_RETURN_IF_ERROR(calib::Calibrate(&g, f.fit, p_trial.options, &rep));
      if (want_plain) {
        auto db = score(g, f);
        if (!db.ok()) return db.status();
        add(&p_trial, db.value());
      }
      p_trial.seconds += Since(c0);
      if (!want_corrected) continue;
      c0 = Clock::now();
      calib::BiasCorrectionReport bc;
      QAIRT_RETURN_IF_ERROR(calib::CorrectBiases(&g, graph, f.fit, o.num_threads, c_trial.options.realize, &bc));
      auto db = score(g, f);
      if (!db.ok()) return db.status();
      add(&c_trial, db.value());
      c_trial.seconds += Since(c0);
    }
    if (want_plain) {
      report->trials.push_back(std::move(p_trial));
      tried.push_back(plain);
    }
    if (want_corrected) {
      report->trials.push_back(std::move(c_trial));
      tried.push_back(corrected);
    }
    return Status::Ok();
  };
  // The first within 0.05 dB of the best: candidates are listed cheapest
  // first, and a difference that small is noise on a dozen samples.
  auto choose = [&] {
    double best = kInfeasible;
    for (const AutoQuantTrial& t : report->trials) best = std::max(best, t.sqnr_db);
    for (size_t i = 0; i < report->trials.size(); ++i)
      if (report->trials[i].sqnr_db >= best - 0.05) return i;
    return size_t{0};
  };
  for (const Group& grp : groups) QAIRT_RETURN_IF_ERROR(run_group(grp));
  report->chosen = choose();
  // The fixed ranges change which tensors are 16-bit, independent of how
  // encodings are fitted: tried once, on top of the best so far.
  if (wide_applies) {
    Techniques t = tried[report->chosen];
    t.wide_fixed = true;
    if (options.progress) options.progress(report->trials.size(), total, "auto quant");
    const auto c0 = Clock::now();
    AutoQuantTrial trial;
    trial.label = LabelOf(t);
    trial.options = options_of(t);
    for (const Fold& f : folds) {
      Graph g = graph;
      calib::Report rep;
      QAIRT_RETURN_IF_ERROR(calib::Calibrate(&g, f.fit, trial.options, &rep));
      auto db = score(g, f);
      if (!db.ok()) return db.status();
      add(&trial, db.value());
    }
    trial.seconds = Since(c0);
    report->trials.push_back(std::move(trial));
    tried.push_back(t);
    report->chosen = choose();
  }
  *chosen = report->trials[report->chosen].options;
  chosen->num_threads = user.num_threads;
  report->seconds = Since(t0);
  return Status::Ok();
}

std::string AutoQuantText(const AutoQuantReport& r) {
  std::string s = fmt::format(
      "auto quant: {} configurations, each scored as the target runs it {} (the worst output's SQNR):\n",
      r.trials.size(),
      r.folds > 1 ? fmt::format("on samples it was not calibrated on (calibrated on one half of the {} samples and "
                                "scored on the other, both ways: the worse fold, then each fold)", r.samples)
                  : fmt::format("on the samples it was calibrated on (only {}: four or more are split in halves, "
                                "so that no technique is judged on the samples it fitted)", r.samples));
  size_t width = 0;
  for (const AutoQuantTrial& t : r.trials) width = std::max(width, t.label.size());
  for (size_t i = 0; i < r.trials.size(); ++i) {
    const AutoQuantTrial& t = r.trials[i];
    std::string db = "no kernels";
    if (t.sqnr_db > kInfeasible) {
      db = fmt::format("{:.2f} dB", t.sqnr_db);
      if (t.fold_db.size() > 1) db += fmt::format(" ({:.2f}, {:.2f})", t.fold_db[0], t.fold_db[1]);
    }
    s += fmt::format("  {:<{}}  {:>26}  {:6.2f} s{}\n", t.label, width, db, t.seconds, i == r.chosen ? "  <- chosen" : "");
  }
  s += fmt::format("  cost: {:.2f} s\n", r.seconds);
  return s;
}

std::string AutoQuantJson(const AutoQuantReport& r) {
  std::string s = fmt::format("{{\"samples\":{},\"folds\":{},\"chosen\":{},\"seconds\":{},\"trials\":[",
                              r.samples, r.folds, r.chosen, Db(r.seconds));
  for (size_t i = 0; i < r.trials.size(); ++i)
    s += fmt::format("{}{{\"label\":{},\"sqnr_db\":{},\"seconds\":{}}}", i ? "," : "", JsonQuoted(r.trials[i].label),
                     Db(r.trials[i].sqnr_db <= kInfeasible ? NAN : r.trials[i].sqnr_db), Db(r.trials[i].seconds));
  return s + "]}";
}

}  // namespace qairt::analyze
