//! Drawing egui's output into the window with egui-wgpu, on the shared device.
//!
//! egui itself only produces triangles ("paint jobs") and texture updates (the font atlas,
//! images). egui-wgpu's `Renderer` turns them into a render pass. This file owns what a
//! frame needs around that pass: the configured surface, and the order of the steps:
//! textures, buffers, pass, submit, present, then free old textures.

use egui_wgpu::{RendererOptions, ScreenDescriptor};
use galaxy::gpu::GpuContext;

/// The window's surface and egui's renderer.
pub struct Renderer {
    surface: wgpu::Surface<'static>,
    configuration: wgpu::SurfaceConfiguration,
    egui_renderer: egui_wgpu::Renderer,
}

/// What egui produced for one frame, ready to draw.
pub struct Frame {
    pub primitives: Vec<egui::ClippedPrimitive>,
    pub textures_delta: egui::TexturesDelta,
    pub pixels_per_point: f32,
}

/// Why a frame was not drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SkippedFrame {
    #[error("the window is hidden or has no area")]
    NotVisible,
    #[error("the surface changed and was configured again; the next frame will draw")]
    Reconfigured,
    #[error("the surface was lost")]
    Lost,
}

impl Renderer {
    // ANCHOR: renderer_new
    /// Configures `surface` for the window's size in pixels and creates egui's renderer.
    pub fn new(
        context: &GpuContext,
        surface: wgpu::Surface<'static>,
        adapter: &wgpu::Adapter,
        width: u32,
        height: u32,
    ) -> Result<Renderer, egui_wgpu::WgpuError> {
        let capabilities = surface.get_capabilities(adapter);
        // egui blends in gamma space and prefers a plain (non-sRGB) 8-bit format.
        let format = egui_wgpu::preferred_framebuffer_format(&capabilities.formats)?;
        let configuration = wgpu::SurfaceConfiguration {
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            format,
            color_space: wgpu::SurfaceColorSpace::Auto,
            width: width.max(1),
            height: height.max(1),
            // Wait for the display (vsync): no frame is drawn that nobody sees, and the
            // frame interval shows the display's rate when the UI keeps up.
            present_mode: wgpu::PresentMode::AutoVsync,
            desired_maximum_frame_latency: 2,
            alpha_mode: wgpu::CompositeAlphaMode::Auto,
            view_formats: Vec::new(),
        };
        surface.configure(context.device(), &configuration);
        let egui_renderer =
            egui_wgpu::Renderer::new(context.device(), format, RendererOptions::default());
        Ok(Renderer {
            surface,
            configuration,
            egui_renderer,
        })
    }
    // ANCHOR_END: renderer_new

    /// Follows the window's new size (in pixels). A size of zero (minimised) is kept
    /// until the window is visible again: a surface cannot be zero pixels wide.
    pub fn resize(&mut self, context: &GpuContext, width: u32, height: u32) {
        if width == 0 || height == 0 {
            return;
        }
        self.configuration.width = width;
        self.configuration.height = height;
        self.surface
            .configure(context.device(), &self.configuration);
    }

    // ANCHOR: render
    /// Draws one frame of egui output and presents it.
    pub fn render(&mut self, context: &GpuContext, mut frame: Frame) -> Result<(), SkippedFrame> {
        let (device, queue) = (context.device(), context.queue());
        // 1. Textures egui created or changed this frame (the font atlas on the first).
        for (id, image_deltas) in frame.textures_delta.set.drain() {
            for delta in &image_deltas {
                self.egui_renderer.update_texture(device, queue, id, delta);
            }
        }
        let drawn = self.draw_and_present(context, &frame.primitives, frame.pixels_per_point);
        // 5. Textures egui no longer needs: freed after the submission, which keeps alive
        //    what it uses.
        for id in frame.textures_delta.free.drain() {
            self.egui_renderer.free_texture(&id);
        }
        drawn
    }

    fn draw_and_present(
        &mut self,
        context: &GpuContext,
        primitives: &[egui::ClippedPrimitive],
        pixels_per_point: f32,
    ) -> Result<(), SkippedFrame> {
        let (device, queue) = (context.device(), context.queue());
        let surface_texture = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(texture)
            | wgpu::CurrentSurfaceTexture::Suboptimal(texture) => texture,
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => {
                return Err(SkippedFrame::NotVisible);
            }
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Validation => {
                self.surface.configure(device, &self.configuration);
                return Err(SkippedFrame::Reconfigured);
            }
            wgpu::CurrentSurfaceTexture::Lost => return Err(SkippedFrame::Lost),
        };
        let view = surface_texture
            .texture
            .create_view(&wgpu::TextureViewDescriptor::default());
        let screen = ScreenDescriptor {
            size_in_pixels: [self.configuration.width, self.configuration.height],
            pixels_per_point,
        };

        // 2. Vertices and indices of this frame's triangles.
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("egui frame"),
        });
        let callback_commands =
            self.egui_renderer
                .update_buffers(device, queue, &mut encoder, primitives, &screen);
        // 3. One render pass that clears the window and draws the triangles.
        {
            let pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("egui"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            // egui-wgpu wants a pass not tied to the encoder's borrow; the encoder is not
            // touched again until the pass is dropped at the end of this block.
            self.egui_renderer
                .render(&mut pass.forget_lifetime(), primitives, &screen);
        }
        // 4. Submit to the queue the compute work also uses, and show the frame.
        queue.submit(callback_commands.into_iter().chain([encoder.finish()]));
        queue.present(surface_texture);
        Ok(())
    }
    // ANCHOR_END: render
}
