# frozen_string_literal: true

require_relative "../test_helper"
require "json"
require "tmpdir"
require_relative "../../chaos/checker"
require_relative "../../chaos/plot"

module LeaseMachines
  # The chaos report on histories written by hand: the availability figure
  # (per resource, the longest stretch with no accepted write, in seconds and
  # TTLs, with the faults that overlapped it), and the plot, drawn by gnuplot
  # from data files that hold the history's numbers.
  class ChaosReportTest < Minitest::Test
    S = 1_000_000_000 # ns
    PNG_SIGNATURE = "\x89PNG\r\n\x1A\n".b

    def test_the_longest_stretch_without_an_accepted_write_per_resource_and_its_faults
      figures = report(writes: { "chaos/r0" => [1, 2, 6], "chaos/r1" => [] },
                       faults: [fault("pg_crash", 2.5, 3.0), fault("pause", 8.0, 9.0)]).figures

      r0, r1 = figures[:longest_without_a_write].values_at("chaos/r0", "chaos/r1")
      assert_equal({ seconds: 4.0, ttls: 8.0, faults: { "pg_crash" => 1 } }, r0)
      assert_equal({ seconds: 10.0, ttls: 20.0, faults: { "pause" => 1, "pg_crash" => 1 } }, r1)
    end

    def test_the_summary_names_the_worst_resource_in_ttls
      summary = report(writes: { "chaos/r0" => [1, 9.5], "chaos/r1" => [0.5, 4, 7] },
                       faults: [fault("partition", 3.0, 5.0)]).summary

      assert_includes summary, "availability: longest stretch with no accepted write, per resource: r0 8.5 s, r1 3.5 s; " \
                               "the worst (chaos/r0) is 17.0 TTLs, under partition 1"
    end

    # Worker 1's write with token 1 at 7 s comes after token 2: a stale write,
    # drawn as a violation on r1.
    def test_the_plot_is_drawn_by_gnuplot_from_the_histories_numbers
      rows = [row(1, "chaos/r0", 1, 1.0, worker: 0), row(2, "chaos/r0", 2, 2.5, worker: 1),
              row(3, "chaos/r1", 2, 4.0, worker: 0), row(4, "chaos/r1", 1, 7.0, worker: 1)]
      refused = { t: 5 * S, event: "refused", worker: 2, pid: 102, resource: "chaos/r0", token: 1 }
      history(writes: {}, faults: [fault("pause", 6.5, 7.5)], rows: rows, events: [refused]) do |dir|
        image = Chaos::Plot.new(dir).write(File.join(dir, "tokens.png"))

        png = File.binread(image)
        assert_equal PNG_SIGNATURE, png[0, 8], "gnuplot wrote a PNG"
        assert_equal [1000, 486], png[16, 8].unpack("NN"), "two panels of 150 px and two lanes of 18 under a title and an axis"
        assert_operator png.bytesize, :>, 10_000, "the PNG holds a picture, not an empty frame"
        assert_equal ["1.0 1 0", "2.5 2 1"], data(dir, "writes-0"), "x seconds, token, worker"
        assert_equal ["4.0 2 0", "7.0 1 1"], data(dir, "writes-1")
        assert_equal ["5.0 1"], data(dir, "refused-0")
        assert_equal ["7.0 1", "7.0 1"], data(dir, "violations-1"), "token_went_down and write_after_greater"
        assert_equal ["7.0 0 6.5 7.5 -0.35 0.35 #{Chaos::Plot::FAULT_COLORS['pause']}"], data(dir, "faults"),
                     "x, lane, from, to, colour"
        assert_includes File.read(File.join(dir, "tokens.gp")), "tokens-writes-1.dat"
      end
    end

    def test_an_svg_by_its_extension
      history(writes: {}, faults: [], rows: [row(1, "chaos/r0", 1, 1.0)]) do |dir|
        svg = File.read(Chaos::Plot.new(dir).write(File.join(dir, "tokens.svg")))
        assert_match(/\A<\?xml.*<svg/m, svg[0, 400])
        assert_includes svg, "chaos/r0"
      end
    end

    def test_without_gnuplot_the_plot_fails_saying_what_to_install
      history(writes: {}, faults: [], rows: []) do |dir|
        plot = Gnuplot.new(File.join(dir, "tokens.png"), executable: File.join(dir, "no-gnuplot"))
        error = assert_raises(Gnuplot::Error) { plot.draw }
        assert_match(/gnuplot not found .*no-gnuplot.*install Debian's gnuplot-nox/, error.message)
        refute_path_exists File.join(dir, "tokens.png")
      end
    end

    def test_a_script_gnuplot_refuses_fails_with_gnuplots_message
      Dir.mktmpdir("chaos-plot") do |dir|
        plot = Gnuplot.new(File.join(dir, "bad.png")) << "plot no_such_function(x)"
        error = assert_raises(Gnuplot::Error) { plot.draw }
        assert_match(/gnuplot failed on .*bad\.gp.*undefined function/m, error.message)
      end
    end

    def test_an_image_must_be_png_or_svg
      error = assert_raises(ArgumentError) { Gnuplot.new("tokens.gif") }
      assert_equal 'output must end in .png or .svg, got "tokens.gif"', error.message
    end

    private

    def data(dir, name)
      File.readlines(File.join(dir, "tokens-#{name}.dat"), chomp: true)
    end

    def row(id, resource, token, at_s, worker: 0)
      { id: id, database: "sqlite", resource: resource, token: token, worker: worker, pid: 100 + worker, sequence: id,
        written_at_ns: at_s * S, store_token: nil, store_expires_ns: nil, fenced: false }
    end

    def fault(kind, from, to)
      { t: to * S, event: "fault", kind: kind, started: from * S, ended: to * S }
    end

    def report(writes:, faults:)
      history(writes: writes, faults: faults) { |dir| Chaos::Checker.new(dir).run }
    end

    # A 10-second run's folder, with a TTL of 0.5 s and two resources: worker
    # events (`writes`: seconds per resource, and `events`), faults and the
    # protected rows.
    def history(writes:, faults:, rows: [], events: [])
      Dir.mktmpdir("chaos-report") do |dir|
        Dir.mkdir(File.join(dir, "workers"))
        File.write(File.join(dir, "runner.jsonl"),
                   "#{JSON.generate(t: 0, event: 'run', engine: 'sqlite', resources: 2, duration: 10.0, ttl: 0.5, seed: 1)}\n")
        events += writes.flat_map do |resource, seconds|
          seconds.map { |at| { t: at * S, event: "write", worker: 0, pid: 100, resource: resource, token: 1 } }
        end
        File.write(File.join(dir, "workers", "w0.jsonl"), events.sort_by { |e| e[:t] }.map { |e| "#{JSON.generate(e)}\n" }.join)
        File.write(File.join(dir, "nemesis.jsonl"), faults.map { |f| "#{JSON.generate(f)}\n" }.join)
        File.write(File.join(dir, "data.json"), JSON.generate(rows: rows, last_issued: {}))
        yield dir
      end
    end
  end
end
