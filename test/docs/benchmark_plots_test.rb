# frozen_string_literal: true

require_relative "../test_helper"
require "json"
require "tmpdir"
require_relative "../../bench/plots"

module LeaseMachines
  # BENCHMARKS.md reads top down: the targets table, the figures, then the
  # notebook. The figures are drawn by gnuplot (`rake bench:plots`,
  # bench/plots.rb) from the recorded results in docs/benchmarks/*.json, and
  # their data files hold those results' numbers.
  class BenchmarkPlotsTest < Minitest::Test
    ROOT = File.expand_path("../..", __dir__)
    RESULTS = File.join(ROOT, "docs/benchmarks")
    PNG_SIGNATURE = "\x89PNG\r\n\x1A\n".b

    def test_the_figures_are_drawn_from_the_recorded_results
      Dir.mktmpdir("bench-plots") do |dir|
        images = BenchPlots.new(images: dir, scratch: dir).draw

        assert_equal %w[decision-cost contention handover renewal-lateness].map { |name| File.join(dir, "#{name}.png") },
                     images
        images.each do |image|
          png = File.binread(image)
          assert_equal PNG_SIGNATURE, png[0, 8], image
          assert_operator png.bytesize, :>, 10_000, "#{image} holds a picture"
        end
        assert_equal handovers, File.readlines(File.join(dir, "handover-handover.dat"), chomp: true)
        lateness = recorded("runtime").dig("renewals", "lateness_percentiles")
        assert_equal "99 #{100 * lateness[98]}", File.readlines(File.join(dir, "renewal-lateness-lateness.dat"), chomp: true)[98]
        assert_includes File.read(File.join(dir, "decision-cost-durable.dat")),
                        "\"acquire granted\" #{%w[stores mysql].map { |name| acquire_vs_floor(name) }.join(' ')}"
      end
    end

    def test_a_missing_result_names_its_file_and_benchmark
      Dir.mktmpdir("bench-plots") do |dir|
        error = assert_raises(ArgumentError) { BenchPlots.new(results: dir, images: dir, scratch: dir).draw }
        assert_equal "no recorded result for \"decisions\" at #{dir}/decisions.json: run bench/decisions_bench.rb first",
                     error.message
      end
    end

    # Every figure is committed and shown under "Figures", after the targets
    # table and before the notebook.
    def test_benchmarks_md_shows_every_figure_between_the_targets_and_the_notebook
      text = File.read(File.join(ROOT, "BENCHMARKS.md"))
      headings = text.scan(/^## (.+)$/).flatten
      assert_equal %w[Targets Figures Notebook], headings.first(3)
      figures = text[/^## Figures$.*?(?=^## )/m]
      BenchPlots::FIGURES.each do |name|
        assert_includes figures, "](docs/benchmarks/#{name}.png)"
        assert_path_exists File.join(RESULTS, "#{name}.png")
      end
    end

    private

    def recorded(name) = JSON.parse(File.read(File.join(RESULTS, "#{name}.json")))

    def acquire_vs_floor(name) = recorded(name).fetch("engines").map { |engine| engine.dig("vs_floor", "acquire granted") }

    # The contended rows with a handover, as the data file writes them.
    def handovers
      recorded("contention").fetch("rows").filter_map do |row|
        next if row["engine"] == "advisory" || BenchPlots::UNCONTENDED.include?(row["processes"]) || row["handover_p50"].nil?

        "\"#{row['engine']} #{row['processes']}\" #{row['handover_p50']} #{row['handover_p99']}"
      end
    end
  end
end
