// The whole step's embedding and head graphs per family: the LM head they read is the one the
// parameter count counts, and each family's head ops (final norm kind, softcap, logit scale,
// embedding scale) are there.
#include <gtest/gtest.h>

#include <cmath>

#include "explorer/whole_step.h"
#include "model/model_loader.h"
#include "model/param_count.h"

namespace layoutx::explorer {
namespace {

using model::OpKind;
const std::string kHf = std::string(LAYOUTX_TEST_DIR) + "/fixtures/hf/";

int64_t weights(const model::LayerGraph& g) {
  int64_t n = 0;
  for (auto v : g.of_kind(OpKind::kWeight)) n += model::numel(g.op(v).shape);
  return n;
}

TEST(WholeStepFamilies, HeadReadsTheCountedLmHead) {
  for (const char* f : {"llama3.2-1b.json", "mistral-7b.json", "gemma2-2b.json", "cohere2-r7b.json", "spark2_5.json"}) {
    const model::ModelSpec m = model::import_hf_config(kHf + f);
    model::LayerGraph head;
    build_head_graph(m, model::Precision::kFp16, head);
    const model::ParamCount c = model::count_parameters(m);
    // Final norm + the [hidden, vocab] matrix, which a tied model reads from the embedding.
    EXPECT_EQ(weights(head), c.final_norm + (m.tied_embeddings ? c.embedding : c.lm_head)) << f;
  }
}

TEST(WholeStepFamilies, EachFamilysHeadOps) {
  model::LayerGraph g2, co, ge, sp, emb;
  build_head_graph(model::import_hf_config(kHf + "gemma2-2b.json"), model::Precision::kFp16, g2);
  EXPECT_EQ(g2.count(OpKind::kTanh), 1);  // final_logit_softcapping 30
  EXPECT_DOUBLE_EQ(g2.op(g2.by_name("head/softcap_c")).scalar, 30.0);
  EXPECT_EQ(g2.op(g2.by_name("head/final_norm")).norm_offset, 1.0);
  build_head_graph(model::import_hf_config(kHf + "cohere2-r7b.json"), model::Precision::kFp16, co);
  EXPECT_EQ(co.count(OpKind::kLayerNorm), 1);
  EXPECT_DOUBLE_EQ(co.op(co.by_name("head/logit_scale_c")).scalar, 0.25);
  build_embed_graph(model::import_hf_config(kHf + "gemma3-1b.json"), model::Precision::kFp16, emb);
  EXPECT_DOUBLE_EQ(emb.op(emb.by_name("embed/scale_c")).scalar, std::sqrt(1152.0));
  build_head_graph(model::import_hf_config(kHf + "spark2_5.json"), model::Precision::kFp16, sp);
  EXPECT_EQ(sp.count(OpKind::kTanh) + sp.count(OpKind::kLayerNorm), 0);
  EXPECT_EQ(sp.count(OpKind::kMul), 0);
}

}  // namespace
}  // namespace layoutx::explorer
