# frozen_string_literal: true

require_relative "../docs/doc_examples"

module LeaseMachines
  # Every ```ruby block of docs/RUNTIME.md, run and checked by the README
  # test's own runner (DocExamples: the same annotations, `# =>`, `# raises`).
  class RuntimeDocTest < DocExamples
    blocks("docs/RUNTIME.md").each do |block|
      next if block.marker == :"ill-typed" && RBS_RUNTIME_CHECK

      define_method(:"test_runtime_md_block_at_line_#{block.line}") { run_block(block) }
    end

    def test_the_document_has_checked_examples
      blocks = self.class.blocks("docs/RUNTIME.md")
      assert_operator blocks.size, :>=, 5
      assert_operator blocks.sum(&:annotations), :>=, 15
    end
  end
end
